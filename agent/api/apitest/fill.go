package apitest

import (
	"encoding/json"
	"reflect"
	"time"
)

// filledAt is the time every time.Time field gets.
var filledAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Fill sets every exported field that v points to, recursively, to a value
// that is not its zero value: pointers point to filled values, slices hold
// one filled element, maps one filled entry. Fields JSON leaves out
// (`json:"-"`) are left alone.
func Fill(v any) {
	fill(reflect.ValueOf(v).Elem(), 0)
}

func fill(v reflect.Value, depth int) {
	if depth > 8 { // a type that contains itself stops here
		return
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(filledAt))
		return
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		// JSON of its own (an event's payload): a value, not bytes of 1s.
		v.Set(reflect.ValueOf(json.RawMessage(`"x"`)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// Zero names the exported fields of the struct v points to that hold their
// zero value, recursively ("Spec.Elastic.MinNP"): after converting a Filled
// value, a name here is a field the conversion forgot.
func Zero(v any) []string {
	var out []string
	zero(reflect.ValueOf(v).Elem(), "", &out)
	return out
}

func zero(v reflect.Value, path string, out *[]string) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		if v.Interface().(time.Time).IsZero() {
			*out = append(*out, path)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				zero(v.Field(i), join(path, f.Name), out)
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			*out = append(*out, path)
			return
		}
		zero(v.Elem(), path, out)
	case reflect.Slice:
		if v.Len() == 0 {
			*out = append(*out, path)
			return
		}
		zero(v.Index(0), path+"[]", out)
	default:
		if v.IsZero() {
			*out = append(*out, path)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
