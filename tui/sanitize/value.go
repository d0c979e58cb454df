package sanitize

import "reflect"

// maxDepth bounds how deep Value follows a value: events and reports are
// shallow trees, and a deeper (or cyclic) value is cut rather than followed
// for ever.
const maxDepth = 32

// Value returns v with every string in it — fields, nested structs,
// pointers, slices, map keys and values, interfaces — passed through Text,
// for a console that takes in whole events, runs and reports from a
// source it does not trust (a received report, an attach server) and must
// never put one of their strings on the terminal raw. v itself is not
// changed: what needs neutralising is copied, and a value that needs none
// is returned as it is, without a copy. Unexported fields are copied as
// they are, since nothing outside their package prints them; what is
// nested deeper than maxDepth is dropped.
func Value[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	if !dirty(rv, 0) {
		return v
	}
	var out T
	reflect.ValueOf(&out).Elem().Set(deep(rv, 0))
	return out
}

// dirty reports whether some string reachable from v needs neutralising.
func dirty(v reflect.Value, depth int) bool {
	if depth > maxDepth {
		return true
	}
	switch v.Kind() {
	case reflect.String:
		return !clean(v.String(), false)
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && dirty(v.Elem(), depth+1)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() && dirty(v.Field(i), depth+1) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if dirty(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if dirty(it.Key(), depth+1) || dirty(it.Value(), depth+1) {
				return true
			}
		}
	}
	return false
}

// deep returns a copy of v with its strings neutralised; what holds no
// string (numbers, times, functions) is shared.
func deep(v reflect.Value, depth int) reflect.Value {
	t := v.Type()
	if depth > maxDepth {
		return reflect.Zero(t)
	}
	if !dirty(v, depth) {
		return v
	}
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(t).Elem()
		out.SetString(Text(v.String()))
		return out
	case reflect.Pointer:
		out := reflect.New(t.Elem())
		out.Elem().Set(deep(v.Elem(), depth+1))
		return out
	case reflect.Interface:
		out := reflect.New(t).Elem()
		out.Set(deep(v.Elem(), depth+1))
		return out
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				out.Field(i).Set(deep(v.Field(i), depth+1))
			}
		}
		return out
	case reflect.Slice:
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deep(v.Index(i), depth+1))
		}
		return out
	case reflect.Array:
		out := reflect.New(t).Elem()
		for i := range v.Len() {
			out.Index(i).Set(deep(v.Index(i), depth+1))
		}
		return out
	case reflect.Map:
		out := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			out.SetMapIndex(deep(it.Key(), depth+1), deep(it.Value(), depth+1))
		}
		return out
	}
	return v
}
