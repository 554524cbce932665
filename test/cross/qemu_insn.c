/* SPDX-License-Identifier: MIT */
/*
** qemu_insn.c -- a qemu-user TCG plugin that counts the guest instructions
** a program executes (the plugin API of qemu 7.2, Debian 12; version 1).
** Debian's qemu-user loads plugins but ships none, and has no
** qemu-plugin.h, so the few functions used are declared here.
**
**   cc -O2 -shared -fPIC -o build/cross/qemu_insn.so test/cross/qemu_insn.c
**   qemu-aarch64 -plugin build/cross/qemu_insn.so PROGRAM ARGS...
**
** prints "insns: N" on stderr when the program exits.  Emulated time says
** little about real hardware; a count of instructions at least compares
** two builds of the same code (test/cross/README.md, NEON).
*/
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, struct qemu_plugin_tb*));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb*);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb*,
    enum qemu_plugin_op, void*, uint64_t);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t,
    void (*)(qemu_plugin_id_t, void*), void*);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t nInsn = 0;

/* Each translated block adds its length to the count each time it runs. */
static void insnTrans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb){
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &nInsn, qemu_plugin_tb_n_insns(tb));
}

static void insnExit(qemu_plugin_id_t id, void *p){
  (void)id; (void)p;
  fprintf(stderr, "insns: %llu\n", (unsigned long long)nInsn);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
                        int argc, char **argv){
  (void)info; (void)argc; (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, insnTrans);
  qemu_plugin_register_atexit_cb(id, insnExit, NULL);
  return 0;
}
