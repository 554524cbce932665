#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# crash.py -- deterministic crash points (Reliability, item 2).
#
#   /usr/bin/python3 test/reliability/crash.py [-v]
#
# For each recipe (local, external), each crash point and each journal mode
# (rollback journal DELETE, WAL), a child process (crashdrv, built here from
# crashdrv.c with $CC, default gcc) runs the recipe once and kills itself
# with SIGKILL at that point.  Then this process opens the database afresh
# and checks doc/contract.md §5:
#
#   local     nothing (claim and effect rolled back together) or everything
#             (the claim done, the effect once, the claim recording it);
#   external  nothing; or the claim pending with no arrival or with its one
#             arrival, which no duplicate changes (nothing expires it, no
#             duplicate sends); or done with its one arrival;
#   both      PRAGMA integrity_check ok; and the state is the one this crash
#             point must leave (so the point really is where we say).
#
# Then the same call runs again to the end (the retry, a fresh process), and
# the outcome is checked: local, exactly one effect in all; external, a
# retry sends only when the claim did not survive.
#
# "During COMMIT" is covered by real points inside the commit, found by the
# driver's commit hook and a VFS shim: see the list in crashdrv.c.  Every
# child runs with synchronous=FULL.  A SIGKILL keeps what the OS has been
# given (the page cache survives the process), so these are process crashes,
# not power failures.
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
LIB = os.environ.get('IDEM_LIB', os.path.join(ROOT, 'build', 'idem.so'))
VERBOSE = '-v' in sys.argv[1:]

# The states a crash may leave.
NOTHING, DONE = 'nothing', 'done'
UNSENT, SENT = 'pending, not sent', 'pending, sent'
ALLOWED = {'local': (NOTHING, DONE), 'external': (NOTHING, UNSENT, SENT, DONE)}

BOTH, DEL, WAL = ('delete', 'wal'), ('delete',), ('wal',)


def commit_points(phase, before, after):
    # The points inside one commit: (point, modes, state it must leave).
    return [('%s:hook' % phase, BOTH, before),
            ('%s:journal_synced' % phase, DEL, before),
            ('%s:db_half_written' % phase, DEL, before),
            ('%s:before_journal_delete' % phase, DEL, before),
            ('%s:after_journal_delete' % phase, DEL, after),
            ('%s:wal_before_commit_frame' % phase, WAL, before),
            ('%s:wal_after_commit_frame' % phase, WAL, after),
            ('%s:wal_after_sync' % phase, WAL, after)]


POINTS = {
    'local': [('before_claim', BOTH, NOTHING),
              ('after_claim', BOTH, NOTHING),
              ('after_action', BOTH, NOTHING),       # the effect row written
              ('after_record', BOTH, NOTHING),       # status done, not committed
              *commit_points('commit', NOTHING, DONE),
              ('after_commit', BOTH, DONE)],
    'external': [('before_claim', BOTH, NOTHING),
                 *commit_points('claim', NOTHING, UNSENT),
                 ('after_claim', BOTH, UNSENT),
                 ('after_action', BOTH, SENT),      # arrived at the target
                 *commit_points('record', SENT, DONE),
                 ('after_record', BOTH, DONE)],
}


def connect(path):
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(LIB)
    c.enable_load_extension(False)
    return c


class Case:
    def __init__(self, d, drv, recipe, point, mode, expect):
        self.d, self.drv = d, drv
        self.recipe, self.point, self.mode, self.expect = recipe, point, mode, expect
        self.calls = os.path.join(d, 'calls.db')
        self.target = os.path.join(d, 'target.db')
        self.results = []           # (test name, ok, detail)

    def test(self, name, ok, detail=''):
        self.results.append((name, bool(ok), detail))
        return ok

    def setup(self):
        for f in os.listdir(self.d):
            if f.startswith(('calls.db', 'target.db')):
                os.remove(os.path.join(self.d, f))
        c = connect(self.calls)
        assert c.execute('PRAGMA journal_mode=' + self.mode).fetchone()[0] == self.mode
        c.executescript('''
          CREATE VIRTUAL TABLE calls USING idem;
          CREATE TABLE effects(eid INTEGER PRIMARY KEY, key TEXT NOT NULL, pid INT);
        ''')
        self.page = c.execute('PRAGMA page_size').fetchone()[0]
        c.close()
        t = sqlite3.connect(self.target, isolation_level=None)
        t.execute('PRAGMA journal_mode=' + self.mode)
        t.execute('CREATE TABLE arrivals(aid INTEGER PRIMARY KEY, key TEXT NOT NULL, pid INT)')
        t.close()

    def run_driver(self, point):
        return subprocess.run([self.drv, LIB, self.calls, self.target, self.recipe, point],
                              capture_output=True, text=True, timeout=60)

    def left_behind(self):
        # What the crash left on disk, seen before anything opens the file.
        j, w = self.calls + '-journal', self.calls + '-wal'
        if os.path.exists(j) and os.path.getsize(j) > 0:
            return 'hot journal'
        if os.path.exists(w) and os.path.getsize(w) > 32:
            return 'wal, %d frames' % ((os.path.getsize(w) - 32) // (self.page + 24))
        return '-'

    def state(self):
        # Open afresh (this process holds no connection while children run)
        # and name the state; anything else is described as it is.
        c, t = connect(self.calls), sqlite3.connect(self.target)
        ok = (c.execute('PRAGMA integrity_check').fetchone()[0],
              t.execute('PRAGMA integrity_check').fetchone()[0]) == ('ok', 'ok')
        claims = c.execute('SELECT member, kind, status, id FROM calls').fetchall()
        effects = [r[0] for r in c.execute('SELECT eid FROM effects')]
        arrivals = [r[0] for r in t.execute('SELECT aid FROM arrivals')]
        c.close()
        t.close()
        if self.recipe == 'local':
            if not claims and not effects:
                s = NOTHING
            elif (len(claims) == 1 and claims[0][:3] == (0, 'local', 'done')
                  and effects == [claims[0][3]]):
                s = DONE
            else:
                s = 'claims %r, effects %r' % (claims, effects)
        else:
            if not claims and not arrivals:
                s = NOTHING
            elif len(claims) == 1 and claims[0][:3] == (0, 'external', 'pending') \
                    and len(arrivals) <= 1:
                s = SENT if arrivals else UNSENT
            elif (len(claims) == 1 and claims[0][:3] == (0, 'external', 'done')
                  and arrivals == [claims[0][3]]):
                s = DONE
            else:
                s = 'claims %r, arrivals %r' % (claims, arrivals)
        return s, ok, (effects if self.recipe == 'local' else arrivals)

    def run(self):
        self.setup()
        p = self.run_driver(self.point)
        said = 'crashdrv: SIGKILL at %s' % self.point
        self.test('reached', p.returncode == -9 and said in p.stderr,
                  'exit %s, stdout %r, stderr %r' % (p.returncode, p.stdout, p.stderr))
        self.left = self.left_behind()
        self.found, ok, before = self.state()
        self.test('atomic', self.found in ALLOWED[self.recipe], self.found)
        self.test('expected', self.found == self.expect,
                  'found %s, this point must leave %s' % (self.found, self.expect))
        self.test('integrity', ok, 'integrity_check after the crash')

        # The retry: the same call, run to the end by a fresh process.
        p = self.run_driver('none')
        out = p.stdout.split(' ', 3) if p.returncode == 0 else ['error: ' + p.stderr]
        after, ok, rows = self.state()
        if self.found in (NOTHING,):
            # Nothing survived: the retry claims anew, executes, once.
            self.retry = 'executes'
            good = (out[0] == 'exec' and after == DONE and rows == [int(out[1])])
        elif self.found in (UNSENT, SENT):
            # A pending claim survived: the duplicate is told so, and neither
            # sends nor expires it.
            self.retry = 'replays pending'
            good = (out[0] == 'replay' and out[1] == 'pending'
                    and '"status":"pending"' in out[3] and 'not executed again' in out[3]
                    and after == self.found and rows == before)
        elif self.found == DONE:
            self.retry = 'replays done'
            good = (out[0] == 'replay' and out[1] == 'done' and after == DONE
                    and rows == before and out[2] == str(rows[0]))
        else:
            self.retry, good = '-', False
        self.test('retry', good and ok, 'retry printed %r; then %s, rows %r, integrity %s'
                  % (' '.join(out).strip(), after, rows, ok))
        return self


def build(d):
    drv = os.path.join(d, 'crashdrv')
    cc = os.environ.get('CC', 'gcc')
    cmd = [cc, '-O1', '-Wall', '-Wextra', '-Werror', '-o', drv,
           os.path.join(HERE, 'crashdrv.c'), '-lsqlite3']
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit('crash.py: cannot build the driver: %s\n%s' % (' '.join(cmd), p.stderr))
    return drv


def main():
    d = tempfile.mkdtemp(prefix='idem-crash-')
    try:
        drv = build(d)
        print('crash.py: SQLite %s; %s' % (sqlite3.sqlite_version, LIB))
        cases = []
        for recipe in ('local', 'external'):
            for point, modes, expect in POINTS[recipe]:
                for mode in modes:
                    cases.append(Case(d, drv, recipe, point, mode, expect).run())
    finally:
        shutil.rmtree(d, ignore_errors=True)

    cols = ('recipe', 'crash point', 'journal', 'left behind', 'state found',
            'retry', 'verdict')
    rows = []
    passed = failed = 0
    for c in cases:
        bad = [(n, det) for n, ok, det in c.results if not ok]
        passed += len(c.results) - len(bad)
        failed += len(bad)
        rows.append((c.recipe, c.point, c.mode, c.left, c.found, c.retry,
                     'ok' if not bad else 'FAIL: ' + ', '.join(n for n, _ in bad)))
    w = [max(len(r[i]) for r in (cols,) + tuple(rows)) for i in range(len(cols) - 1)]
    for r in (cols,) + tuple(rows):
        print('  '.join(x.ljust(n) for x, n in zip(r, w)) + '  ' + r[-1])
    for c in cases:
        for n, ok, det in c.results:
            if not ok or VERBOSE:
                print('%s %s %s %s: %s: %s' % ('ok  ' if ok else 'FAIL', c.recipe,
                                               c.point, c.mode, n, det))
    print('tests per row: reached (died by SIGKILL at the point), atomic (an allowed'
          ' state), expected (the state this point must leave), integrity, retry')
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
