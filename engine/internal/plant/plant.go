// Package plant fills every string a value can hold with a marker and
// lists where a marker is left, so a test can check that redaction reaches
// every string field, including ones added later.
package plant

import (
	"reflect"
	"time"
)

// Fill sets every string reachable from v (which must be settable) to
// marker, allocating pointers and one element of every slice on the way.
// Maps of any value get {"k": marker, marker: 1.0}; maps of strings get
// {"k": marker}; other maps are left alone.
func Fill(v reflect.Value, marker string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(marker)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		Fill(v.Elem(), marker)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(v.Field(i), marker)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		for i := range v.Len() {
			Fill(v.Index(i), marker)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		switch v.Type().Elem().Kind() {
		case reflect.Interface:
			v.Set(reflect.ValueOf(map[string]any{"k": marker, marker: 1.0}))
		case reflect.String:
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), reflect.ValueOf(marker).Convert(v.Type().Elem()))
			v.Set(m)
		}
	}
}

// Strings calls fn with the path of every string reachable from v: struct
// fields by name, slice elements as "[]", values of string maps as "{}".
// Maps of other values are skipped.
func Strings(v reflect.Value, path string, fn func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		fn(path, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			Strings(v.Elem(), path, fn)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			Strings(v.Field(i), p, fn)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			Strings(v.Index(i), path+"[]", fn)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				Strings(v.MapIndex(k), path+"{}", fn)
			}
		}
	}
}
