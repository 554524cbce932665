// SPDX-License-Identifier: MIT

package idem

// What the package refuses to hand idem as JSON: bytes and a time, for
// which encoding/json picks a form (base64 text, RFC 3339 text) that
// Python and Node refuse, so that one call would have another key in Go;
// and a string that is not UTF-8, which encoding/json writes as U+FFFD,
// so that two calls whose strings differ would share one key, as Python
// and Node refuse a lone surrogate (doc/contract.md §3).

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ErrNotJSON: arguments or a result that JSON has no form for (a
// []byte, a time.Time, NaN, a channel, a cycle...): the error names the
// path ("args.when is a time.Time, which JSON has no form for; ...") or
// wraps encoding/json's error.  Nothing was claimed for arguments; a
// result is the call's outcome (a local call released or kept failed,
// an external call unknown).
var ErrNotJSON = errors.New("idem: not JSON")

// notJSON is a refusal by the package of a value that is not JSON.
type notJSON struct {
	msg string
	err error // encoding/json's, or nil
}

func (e *notJSON) Error() string        { return e.msg }
func (e *notJSON) Unwrap() error        { return e.err }
func (e *notJSON) Is(target error) bool { return target == ErrNotJSON }

// marshal is json.Marshal of v, refusing first a []byte and a time.Time
// anywhere in it, by path from root ("args", "result"); what ends with
// its verb ("the arguments of place are").
func marshal(v any, what, root string) ([]byte, error) {
	if why := refusedIn(reflect.ValueOf(v), root); why != "" {
		return nil, &notJSON{msg: fmt.Sprintf("idem: %s not JSON: %s", what, why)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &notJSON{msg: fmt.Sprintf("idem: %s not JSON: %v", what, err), err: err}
	}
	return b, nil
}

var (
	timeType          = reflect.TypeOf(time.Time{})
	marshalerType     = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	// mayHold caches, by type, whether a value of it can hold what is
	// refused (a time, bytes, or an interface that may): most argument
	// types are walked by no value at all.
	mayHold sync.Map // reflect.Type -> bool
)

const (
	notUTF8   = "holds bytes that are not UTF-8, which is not text (encoding/json would write U+FFFD for them)"
	bytesHint = "encode it as text (base64 or hex)"
	timeHint  = "give its text (Format(time.RFC3339Nano)) or its time (UnixMilli())"
)

// own: a type whose own MarshalJSON or MarshalText encoding/json calls
// (the user's form for it, honoured; time.Time's is checked before).
func own(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		(t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(marshalerType) ||
			reflect.PointerTo(t).Implements(textMarshalerType)))
}

func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !own(t.Elem())
}

// holds: whether a value of type t may hold a time or bytes.
func holds(t reflect.Type) bool {
	if h, ok := mayHold.Load(t); ok {
		return h.(bool)
	}
	h := holdsWalk(t, map[reflect.Type]bool{})
	mayHold.Store(t, h)
	return h
}

func holdsWalk(t reflect.Type, open map[reflect.Type]bool) bool {
	if t == timeType || t.Kind() == reflect.Pointer && t.Elem() == timeType {
		return true
	}
	if own(t) {
		return false
	}
	if open[t] {
		return false // a recursive type: its other members decide
	}
	open[t] = true
	defer delete(open, t)
	switch t.Kind() {
	case reflect.Interface, reflect.String:
		return true
	case reflect.Pointer, reflect.Array:
		return holdsWalk(t.Elem(), open)
	case reflect.Slice:
		return isBytes(t) || holdsWalk(t.Elem(), open)
	case reflect.Map:
		return t.Key() == timeType || t.Key().Kind() == reflect.String || holdsWalk(t.Elem(), open)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && holdsWalk(f.Type, open) {
				return true
			}
		}
	}
	return false
}

// member is the path of a member: result.order, args["a b"].
func member(path, name string) string {
	ident := name != ""
	for i, r := range name {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return path + "." + name
	}
	q, _ := json.Marshal(name)
	return path + "[" + string(q) + "]"
}

// maxWalk: deeper than idem's nesting limit (doc/contract.md §3) the walk
// stops; encoding/json reports a cycle, idem refuses the depth.
const maxWalk = 1001

// refusal is what was refused, and where: its path is built only then,
// from the members it is in, innermost first.
type refusal struct {
	what string // " is a time.Time, ..."
	in   []string
}

func (r *refusal) at(seg string) *refusal { r.in = append(r.in, seg); return r }

// refusedIn is why v, at path, is refused ("" if it is not).
func refusedIn(v reflect.Value, path string) string {
	if !v.IsValid() || !holds(v.Type()) {
		return ""
	}
	r := walkValue(v, 0)
	if r == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(path)
	for i := len(r.in) - 1; i >= 0; i-- {
		b.WriteString(r.in[i])
	}
	b.WriteString(r.what)
	return b.String()
}

func walkValue(v reflect.Value, depth int) *refusal {
	if depth > maxWalk {
		return nil
	}
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		if v.Type() == timeType || (v.Kind() == reflect.Pointer && v.Type().Elem() == timeType) {
			break
		}
		if own(v.Type()) && v.Kind() == reflect.Pointer {
			return nil
		}
		v = v.Elem()
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer { // a *time.Time
		t = t.Elem()
	}
	if t == timeType {
		return &refusal{what: " is a time.Time, which JSON has no form for; " + timeHint}
	}
	if !holds(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return &refusal{what: " " + notUTF8}
		}
	case reflect.Slice:
		if v.IsNil() {
			return nil // null
		}
		if isBytes(t) {
			name := t.String()
			if t.Name() == "" && t.Elem() == reflect.TypeOf(byte(0)) {
				name = "[]byte"
			}
			return &refusal{what: " is a " + name + ", which JSON has no form for; " + bytesHint}
		}
		fallthrough
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if r := walkValue(v.Index(i), depth+1); r != nil {
				return r.at("[" + strconv.Itoa(i) + "]")
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return nil
		}
		if t.Key() == timeType {
			return &refusal{what: " has a key that is a time.Time, which JSON has no form for; " + timeHint}
		}
		// The first refused member in the order encoding/json writes them.
		var first *refusal
		var firstKey string
		for it := v.MapRange(); it.Next(); {
			if k := it.Key(); k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
				return &refusal{what: " has a key that " + notUTF8}
			}
			if r := walkValue(it.Value(), depth+1); r != nil {
				if k := keyText(it.Key()); first == nil || k < firstKey {
					first, firstKey = r, k
				}
			}
		}
		if first != nil {
			return first.at(member("", firstKey))
		}
	case reflect.Struct:
		return walkStruct(v, depth)
	}
	return nil
}

// walkStruct walks the members encoding/json writes: exported fields by
// their json name, "-" left out, an embedded struct's fields promoted.
func walkStruct(v reflect.Value, depth int) *refusal {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft != timeType && !own(f.Type) {
				if f.Type.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue
					}
					fv = fv.Elem()
				}
				if r := walkStruct(fv, depth); r != nil {
					return r
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && empty(fv) {
			continue
		}
		if r := walkValue(fv, depth+1); r != nil {
			return r.at(member("", name))
		}
	}
	return nil
}

// empty: what omitempty leaves out.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// keyText is a map key as encoding/json writes it.
func keyText(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	if !k.CanInterface() {
		return fmt.Sprint(k)
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			return string(b)
		}
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return fmt.Sprint(k.Interface())
}
