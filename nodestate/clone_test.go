package nodestate

import (
	"reflect"
	"testing"
)

// TestCloneSharesNothing walks every field of a NodeState, those added
// later included, and fails on a slice or pointer that a clone shares
// with the original: the gossip table copies a state once when it stores
// it and hands that copy to every reader, so a field Clone forgets is
// one the sender could still change under them.
func TestCloneSharesNothing(t *testing.T) {
	t.Parallel()
	s := fullState() // every slice and pointer set (wire_test.go)
	c := s.Clone()
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, s)
	}
	checked := 0
	var walk func(path string, a, b reflect.Value)
	walk = func(path string, a, b reflect.Value) {
		switch a.Kind() {
		case reflect.Struct:
			for i := range a.NumField() {
				walk(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		case reflect.Slice, reflect.Pointer, reflect.Map:
			if a.IsNil() {
				t.Errorf("%s is not set in fullState: set it, so that this test covers it", path)
				return
			}
			checked++
			if a.UnsafePointer() == b.UnsafePointer() {
				t.Errorf("Clone shares %s with the original", path)
			}
			if a.Kind() == reflect.Pointer {
				walk(path, a.Elem(), b.Elem())
			}
		}
	}
	walk("NodeState", reflect.ValueOf(&s).Elem(), reflect.ValueOf(&c).Elem())
	if checked < 8 {
		t.Fatalf("checked %d slices and pointers, want all 8 of fullState", checked)
	}
}
