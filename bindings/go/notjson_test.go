// SPDX-License-Identifier: MIT

package idem_test

import (
	"context"
	"database/sql"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	idem "github.com/idem-sqlite/idem/bindings/go"
)

const (
	bytesWhy = ", which JSON has no form for; encode it as text (base64 or hex)"
	timeWhy  = ", which JSON has no form for; give its text (Format(time.RFC3339Nano)) or its time (UnixMilli())"
	utf8Why  = ", which is not text (encoding/json would write U+FFFD for them)"
)

type when struct {
	At    time.Time `json:"when"`
	Note  string    `json:"note,omitempty"`
	Skip  []byte    `json:"-"`
	Empty []byte    `json:"empty,omitempty"`
}

type Inner struct{ Items []any }

type outer struct {
	*Inner
	Tags map[string]any `json:"tags"`
}

// day is the user's own form of a date: honoured, as Node honours a
// class's toJSON().
type day struct{ t time.Time }

func (d day) MarshalJSON() ([]byte, error) { return json.Marshal(d.t.Format("2006-01-02")) }

type node struct {
	Next *node `json:"next"`
	N    int   `json:"n"`
}

// A []byte or a time.Time anywhere in the arguments or a result is
// refused by path, as Python refuses bytes and a datetime and Node a
// Buffer and a Date (doc/contract.md §3): encoding/json wrote base64 and
// RFC 3339 text, another key than theirs.  The user's own MarshalJSON is
// honoured; json.RawMessage is JSON already.
func TestBytesAndTimeRefusedByPath(t *testing.T) {
	_, calls := open(t)
	ctx := ctx5(t)
	at := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	key := func(args any) (string, error) {
		out, err := place.Call(ctx, "w", "c", args)
		return out.Key, err
	}
	refused := []struct {
		args any
		why  string
	}{
		{map[string]any{"b": []any{1, []byte("hi")}}, "args.b[1] is a []byte" + bytesWhy},
		{[]byte("hi"), "args is a []byte" + bytesWhy},
		{at, "args is a time.Time" + timeWhy},
		{&at, "args is a time.Time" + timeWhy},
		{when{At: at}, "args.when is a time.Time" + timeWhy},
		{map[string]any{"a b": map[string]any{"z": at, "y": []byte{1}}}, `args["a b"].y is a []byte` + bytesWhy},
		{outer{Inner: &Inner{Items: []any{0, 1, &at}}}, "args.Items[2] is a time.Time" + timeWhy},
		{outer{Tags: map[string]any{"k": [1]any{json.RawMessage(`1`)}, "x": []any{time.Time{}}}}, "args.tags.x[0] is a time.Time" + timeWhy},
		{map[time.Time]int{at: 1}, "args has a key that is a time.Time" + timeWhy},
		{map[int]any{7: []byte{}}, `args["7"] is a []byte` + bytesWhy},
		// Not UTF-8: encoding/json would write U+FFFD, one key for both.
		{map[string]any{"s": []any{"ok", "a\xffb"}}, "args.s[1] holds bytes that are not UTF-8" + utf8Why},
		{outer{Tags: map[string]any{"x\xfe": 1}}, "args.tags has a key that holds bytes that are not UTF-8" + utf8Why},
		{"\xed\xa0\x80", "args holds bytes that are not UTF-8" + utf8Why},
		{json.RawMessage("1"), ""}, // not refused: the walk passes it
	}
	for _, c := range refused[:len(refused)-1] {
		_, err := key(c.args)
		want := "idem: the arguments of place are not JSON: " + c.why
		if !errors.Is(err, idem.ErrNotJSON) || err.Error() != want {
			t.Errorf("%#v:\n got %v\nwant %s", c.args, err, want)
		}
	}
	// Accepted: what JSON has a form for, the user's own form, JSON itself,
	// a nil []byte or *time.Time (null), what json leaves out.
	a := func(args any) string {
		t.Helper()
		k, err := key(args)
		if err != nil {
			t.Fatalf("%#v: %v", args, err)
		}
		return k
	}
	if a(map[string]any{"d": day{at}}) != a(map[string]any{"d": "2026-12-07"}) {
		t.Error("the user's own MarshalJSON is not honoured")
	}
	if a(map[string]any{"r": json.RawMessage(`{"x":[1,2]}`)}) != a(map[string]any{"r": map[string]any{"x": []int{1, 2}}}) {
		t.Error("a json.RawMessage is not its JSON")
	}
	if a(map[string]any{"s": "caf\u00e9 \ufffd"}) == "" {
		t.Error("valid UTF-8, U+FFFD itself too, is not accepted")
	}
	if a(map[string]any{"b": []byte(nil), "t": (*time.Time)(nil)}) != a(map[string]any{"b": nil, "t": nil}) {
		t.Error("a nil []byte or *time.Time is not null")
	}
	a(struct {
		When  *time.Time `json:"when"`
		Skip  []byte     `json:"-"`
		Empty []byte     `json:"empty,omitempty"`
		inner []byte
		Arr   [2]byte
	}{Skip: []byte("x"), inner: []byte("y")})
	// A cycle: encoding/json's error, by the same sentinel; no hang.
	n := &node{N: 1}
	n.Next = n
	if _, err := key(n); !errors.Is(err, idem.ErrNotJSON) {
		t.Errorf("a cycle: %v", err)
	}
	m := map[string]any{"n": 1}
	m["m"] = []any{m}
	if _, err := key(m); !errors.Is(err, idem.ErrNotJSON) {
		t.Errorf("a cycle of maps: %v", err)
	}
	if _, err := key(map[string]float64{"x": math.NaN()}); !errors.Is(err, idem.ErrNotJSON) ||
		!strings.HasPrefix(err.Error(), "idem: the arguments of place are not JSON: json: unsupported value: NaN") {
		t.Errorf("NaN: %v", err)
	}
	if _, err := idem.Arrived(1, map[string]any{"at": at}); !errors.Is(err, idem.ErrNotJSON) ||
		err.Error() != "idem: the result given to Arrived is not JSON: result.at is a time.Time"+timeWhy {
		t.Errorf("Arrived: %v", err)
	}
}

// A result: a local call is released (or kept failed) with the refusal
// as its cause; an external call is unknown, its note saying why.
func TestResultBytesAndTimeRefused(t *testing.T) {
	db, calls := open(t)
	ctx := ctx5(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE orders(id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	local := idem.Local(calls, "stamp", func(ctx context.Context, tx *sql.Tx, a int) (any, error) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders DEFAULT VALUES"); err != nil {
			return nil, err
		}
		return map[string]any{"items": []any{1, 2, []byte("x")}}, nil
	})
	_, err := local.Call(ctx, "w", "c", 1)
	var ce *idem.CallError
	if !errors.Is(err, idem.ErrNotJSON) || !errors.As(err, &ce) || ce.Status != "released" ||
		!strings.Contains(err.Error(), "idem: the result of stamp is not JSON: result.items[2] is a []byte"+bytesWhy) {
		t.Fatalf("local: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the local tool's writes: %d %v", n, err)
	}
	ext := idem.External(calls, "send", func(ctx context.Context, key string, a int) (time.Time, error) {
		return time.Unix(0, 0), nil
	})
	_, err = ext.Call(ctx, "w", "c", 1)
	if !errors.Is(err, idem.ErrNotJSON) || !errors.Is(err, idem.ErrUnknown) || !errors.As(err, &ce) ||
		!strings.Contains(ce.Error(), "result is a time.Time"+timeWhy) {
		t.Fatalf("external: %v", err)
	}
	var note string
	if err := db.QueryRowContext(ctx, "SELECT note FROM calls WHERE key = ?", ce.Key).Scan(&note); err != nil ||
		!strings.HasSuffix(note, "(reported: the tool returned, so its request was made, but the result of send is not JSON: result is a time.Time"+timeWhy+")") {
		t.Fatalf("external's note: %q %v", note, err)
	}
}

// stamp embeds a time.Time: encoding/json calls the MarshalJSON promoted
// from it, and writes the time as RFC 3339 text.
type stamp struct{ time.Time }

// deepStamp reaches time.Time's MarshalJSON through two embeddings.
type deepStamp struct {
	stamp
	Note string
}

// ptrStamp embeds a *time.Time: encoding/json would call the promoted
// method, through a nil pointer too (a panic).
type ptrStamp struct{ *time.Time }

// ownStamp embeds a time.Time but declares its own form: honoured.
type ownStamp struct{ time.Time }

func (s ownStamp) MarshalJSON() ([]byte, error) { return json.Marshal(s.Unix()) }

// textStamp declares its own MarshalText, but the MarshalJSON promoted
// from time.Time comes first in encoding/json: refused.
type textStamp struct{ time.Time }

func (s textStamp) MarshalText() ([]byte, error) { return []byte("t"), nil }

// label has both forms of its own; embedded beside a time.Time, neither
// method is promoted (two at one depth), and encoding/json writes the
// fields of both: none of the time's.
type label struct{ Name string }

func (l label) MarshalJSON() ([]byte, error) { return json.Marshal(l.Name) }
func (l label) MarshalText() ([]byte, error) { return []byte(l.Name), nil }

type labelled struct {
	time.Time
	label
}

// ptrForm has a MarshalJSON on its pointer: encoding/json calls it only
// where the value is addressable (through a pointer, in a slice), and
// otherwise writes its fields.
type ptrForm struct{ B []byte }

func (p *ptrForm) MarshalJSON() ([]byte, error) { return []byte(`"mine"`), nil }

// ptrText is the same with MarshalText.
type ptrText struct{ S string }

func (p *ptrText) MarshalText() ([]byte, error) { return []byte("mine"), nil }

// A type whose MarshalJSON is time.Time's, promoted through an embedded
// field, is refused as a time.Time is; a MarshalJSON on a pointer is
// honoured only where encoding/json calls it (an addressable value), and
// otherwise the value is walked as encoding/json writes it.
func TestPromotedAndPointerForms(t *testing.T) {
	_, calls := open(t)
	ctx := ctx5(t)
	at := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	key := func(args any) (string, error) {
		out, err := place.Call(ctx, "w", "c", args)
		return out.Key, err
	}
	promoted := func(aType, method string) string { // aType: "an idem_test.stamp"
		return " is " + aType + ", whose " + method + " is its embedded time.Time's" + timeWhy
	}
	refused := []struct {
		args any
		why  string
	}{
		{stamp{at}, "args" + promoted("an idem_test.stamp", "MarshalJSON")},
		{map[string]any{"s": &stamp{at}}, "args.s" + promoted("a *idem_test.stamp", "MarshalJSON")},
		{[]any{deepStamp{stamp: stamp{at}}}, "args[0]" + promoted("an idem_test.deepStamp", "MarshalJSON")},
		{map[string]any{"p": ptrStamp{}}, "args.p" + promoted("an idem_test.ptrStamp", "MarshalJSON")},
		{map[string]any{"p": ptrStamp{&at}}, "args.p" + promoted("an idem_test.ptrStamp", "MarshalJSON")},
		{textStamp{at}, "args" + promoted("an idem_test.textStamp", "MarshalJSON")},
		{map[stamp]int{{at}: 1}, "args has a key that" + promoted("an idem_test.stamp", "MarshalText")},
		{map[*time.Time]int{&at: 1}, "args has a key that is a time.Time" + timeWhy},
		{map[string]any{"l": labelled{at, label{"x"}}}, "args.l embeds a time.Time that encoding/json leaves out" + timeWhy},
		{struct{ M json.Marshaler }{stamp{at}}, "args.M" + promoted("an idem_test.stamp", "MarshalJSON")},
		{struct{ M encoding.TextMarshaler }{ownStamp{at}}, "args.M" + promoted("an idem_test.ownStamp", "MarshalText")},
		// Not addressable: encoding/json writes the fields, base64 for B.
		{ptrForm{B: []byte("x")}, "args.B is a []byte" + bytesWhy},
		{map[string]ptrForm{"m": {B: []byte("x")}}, "args.m.B is a []byte" + bytesWhy},
		{map[string]any{"i": ptrText{S: "\xff"}}, "args.i.S holds bytes that are not UTF-8" + utf8Why},
	}
	for _, c := range refused {
		_, err := key(c.args)
		want := "idem: the arguments of place are not JSON: " + c.why
		if !errors.Is(err, idem.ErrNotJSON) || err.Error() != want {
			t.Errorf("%#v:\n got %v\nwant %s", c.args, err, want)
		}
	}
	a := func(args any) string {
		t.Helper()
		k, err := key(args)
		if err != nil {
			t.Fatalf("%#v: %v", args, err)
		}
		return k
	}
	if b, err := json.Marshal(labelled{at, label{"x"}}); string(b) != `{"Name":"x"}` {
		t.Errorf("encoding/json's form of labelled: %s %v", b, err)
	}
	if a(struct{ M json.Marshaler }{ownStamp{at}}) != a(map[string]any{"M": at.Unix()}) {
		t.Error("a json.Marshaler field's own form is not honoured")
	}
	// The user's own form, declared beside an embedded time: honoured.
	if a(ownStamp{at}) != a(at.Unix()) {
		t.Error("a MarshalJSON declared beside an embedded time.Time is not honoured")
	}
	// Addressable: encoding/json calls the pointer's method, and so the
	// walk honours it (a pointer, a slice's element, a field through one).
	for _, v := range []any{&ptrForm{B: []byte("x")}, []ptrForm{{B: []byte("x")}}, &struct{ P ptrForm }{ptrForm{B: []byte("x")}}} {
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), `"mine"`) {
			t.Fatalf("encoding/json did not call the pointer's method: %s", b)
		}
		a(v)
	}
	if a(&ptrText{S: "\xff"}) != a("mine") {
		t.Error("an addressable value's MarshalText is not honoured")
	}
}

// raw is the user's text form, whatever bytes it holds.
type raw struct{ b string }

func (r raw) MarshalText() ([]byte, error) { return []byte(r.b), nil }

// The text a user's MarshalText gives is checked as a string is:
// encoding/json writes U+FFFD for bytes that are not UTF-8, so two calls
// whose texts differ had one key (and two map keys one name).
func TestTextFormNotUTF8Refused(t *testing.T) {
	_, calls := open(t)
	ctx := ctx5(t)
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	why := " whose MarshalText gives bytes that are not UTF-8" + utf8Why
	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{"r": raw{"a\xff"}}, "args.r is an idem_test.raw," + why},
		{[]raw{{"ok"}, {"\xfe"}}, "args[1] is an idem_test.raw," + why},
		{map[raw]int{{"ok"}: 1, {"\xff"}: 2}, "args has a key that is an idem_test.raw," + why},
	} {
		_, err := place.Call(ctx, "w", "c", c.args)
		if want := "idem: the arguments of place are not JSON: " + c.want; !errors.Is(err, idem.ErrNotJSON) || err.Error() != want {
			t.Errorf("%#v:\n got %v\nwant %s", c.args, err, want)
		}
	}
	if _, err := place.Call(ctx, "w", "c", map[raw]raw{{"k"}: {"caf\u00e9"}}); err != nil {
		t.Errorf("UTF-8 text: %v", err)
	}
}

// omitzero (Go 1.24's encoding/json) leaves a zero field out, a zero
// time.Time too: the walk leaves out what encoding/json leaves out, by
// the field's IsZero where it has one, and refuses the rest.
func TestOmitZeroLeftOut(t *testing.T) {
	if b, _ := json.Marshal(struct {
		A int `json:"a,omitzero"`
	}{}); string(b) != "{}" {
		t.Skip("this encoding/json has no omitzero")
	}
	_, calls := open(t)
	ctx := ctx5(t)
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	type at struct {
		At  time.Time  `json:"at,omitzero"`
		Ptr *time.Time `json:"ptr,omitzero"`
		N   int        `json:"n"`
	}
	k1, err := place.Call(ctx, "w", "c", at{N: 1})
	if err != nil {
		t.Fatalf("a zero time left out: %v", err)
	}
	k2, err := place.Call(ctx, "w", "c", map[string]int{"n": 1})
	if err != nil || k1.Key != k2.Key {
		t.Errorf("not the same call: %v", err)
	}
	now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	if _, err := place.Call(ctx, "w", "c", at{At: now}); err == nil ||
		err.Error() != "idem: the arguments of place are not JSON: args.at is a time.Time"+timeWhy {
		t.Errorf("a time: %v", err)
	}
	// A pointer to a zero time: its IsZero says zero, left out too.
	if _, err := place.Call(ctx, "w", "c", at{Ptr: &time.Time{}}); err != nil {
		t.Errorf("a pointer to a zero time: %v", err)
	}
	if b, _ := json.Marshal(at{Ptr: &time.Time{}}); string(b) != `{"n":0}` {
		t.Errorf("encoding/json: %s", b)
	}
}

// A map's key is text or an integer, as in Python and Node (whose keys
// are all text): encoding/json refuses any other (a float64, a bool, an
// interface), and the package refuses it first, by path and naming the
// key (doc/contract.md §3); an integer key is its digits, the key that
// Python's {7: "a"} and Node's {7: 'a'} give.
func TestKeysTextOrIntegers(t *testing.T) {
	_, calls := open(t)
	ctx := ctx5(t)
	place := idem.Local(calls, "place", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	const why = ", which JSON has no form for; a key is text or an integer"
	type keyed struct {
		M    map[float64]int `json:"m"`
		Skip map[bool]int    `json:"skip,omitempty"`
	}
	for _, c := range []struct {
		args any
		want string
	}{
		{map[float64]int{1.5: 1}, "args has a key that is a float64 (1.5)" + why},
		{map[string]any{"m": map[float64]string{2: "b", 1: "a"}}, "args.m has a key that is a float64 (1)" + why},
		{map[string]any{"m": []any{map[bool]int{true: 1}}}, "args.m[0] has a key that is a bool (true)" + why},
		{map[string]any{"m": map[float64]int{}}, "args.m is a map[float64]int, whose keys JSON has no form for; a key is text or an integer"},
		{keyed{}, "args.m is a map[float64]int, whose keys JSON has no form for; a key is text or an integer"},
		{map[any]int{"a": 1}, "args is a map[interface {}]int, whose keys JSON has no form for; a key is text or an integer"},
		{map[*int]int{new(int): 1}, "args is a map[*int]int, whose keys JSON has no form for; a key is text or an integer"},
		{map[string]any{"m": map[float64]any{1: []byte("x")}}, "args.m has a key that is a float64 (1)" + why},
	} {
		_, err := place.Call(ctx, "w", "c", c.args)
		if want := "idem: the arguments of place are not JSON: " + c.want; !errors.Is(err, idem.ErrNotJSON) || err.Error() != want {
			t.Errorf("%#v:\n got %v\nwant %s", c.args, err, want)
		}
	}
	r := idem.Local(calls, "r", func(ctx context.Context, tx *sql.Tx, a any) (any, error) { return map[bool]int{false: 1}, nil })
	if _, err := r.Call(ctx, "w", "c", nil); !errors.Is(err, idem.ErrNotJSON) ||
		!strings.Contains(err.Error(), "the result of r is not JSON: result has a key that is a bool (false)"+why) {
		t.Errorf("a result: %v", err)
	}
	// Text and integer keys: the same key in all three packages
	// (idem_key('u', 'c', 't', '{"m":{"7":"a"}}')).
	tool := idem.Local(calls, "t", func(ctx context.Context, tx *sql.Tx, a any) (int, error) { return 1, nil })
	for _, args := range []any{
		map[string]any{"m": map[int]string{7: "a"}},
		map[string]any{"m": map[uint8]string{7: "a"}},
		map[string]any{"m": map[string]string{"7": "a"}},
		struct {
			M map[int64]string `json:"m"`
		}{map[int64]string{7: "a"}},
	} {
		out, err := tool.Call(ctx, "u", "c", args)
		if err != nil || out.Key != "e324e8b56f777c14f32f9eaba74dbcb4" {
			t.Errorf("%#v: %s %v", args, out.Key, err)
		}
	}
	if _, err := place.Call(ctx, "w", "c", keyed{M: map[float64]int{}, Skip: nil}); err == nil {
		t.Error("an empty map[float64]int accepted")
	}
}
