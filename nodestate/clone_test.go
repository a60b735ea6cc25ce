package nodestate

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestCloneSharesNothing walks every field of a NodeState, those added
// later included, and the elements of its slices, and fails on a slice or
// pointer that a clone shares with the original: the gossip table copies
// a state once when it stores it and hands that copy to every reader, so
// a field Clone forgets is one the sender could still change under them.
// An element that gains a slice (a PE's list of devices, say) is caught
// too: slices.Clone of the outer slice copies its headers only.
func TestCloneSharesNothing(t *testing.T) {
	t.Parallel()
	s := fullState() // every slice and pointer set (wire_test.go)
	c := s.Clone()
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, s)
	}
	shared, unset, checked := sharing(&s, &c)
	for _, p := range unset {
		t.Errorf("%s is not set in fullState: set it, so that this test covers it", p)
	}
	for _, p := range shared {
		t.Errorf("Clone shares %s with the original", p)
	}
	if checked < 8 {
		t.Fatalf("checked %d slices and pointers, want all 8 of fullState", checked)
	}
}

// sharing walks a and b, pointers to values of one type, through struct
// fields, pointers, and slice and map elements. It returns the paths of
// the slices, pointers and maps the two share, of those nil or empty in a
// (which the walk cannot cover), and how many it compared.
func sharing(a, b any) (shared, unset []string, checked int) {
	var walk func(path string, a, b reflect.Value)
	walk = func(path string, a, b reflect.Value) {
		switch a.Kind() {
		case reflect.Struct:
			for i := range a.NumField() {
				walk(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
			}
		case reflect.Slice, reflect.Pointer, reflect.Map:
			if a.IsNil() || a.Kind() != reflect.Pointer && a.Len() == 0 {
				unset = append(unset, path)
				return
			}
			checked++
			if a.UnsafePointer() == b.UnsafePointer() {
				shared = append(shared, path)
			}
			switch a.Kind() {
			case reflect.Pointer:
				walk(path, a.Elem(), b.Elem())
			case reflect.Slice:
				for i := range min(a.Len(), b.Len()) {
					walk(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
				}
			case reflect.Map:
				for _, k := range a.MapKeys() {
					if bv := b.MapIndex(k); bv.IsValid() {
						walk(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), bv)
					}
				}
			}
		}
	}
	walk(reflect.TypeOf(a).Elem().Name(), reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
	return shared, unset, checked
}

// TestSharingWalksElements: the walk reaches a slice held by an element
// of a slice, and through a pointer in one, which a check of the outer
// slices' headers alone would pass.
func TestSharingWalksElements(t *testing.T) {
	t.Parallel()
	type dev struct{ Minor *int }
	type pe struct {
		UUIDs []string
		Devs  []dev
	}
	type state struct{ PEs []pe }
	minor := 3
	a := state{PEs: []pe{{UUIDs: []string{"u"}, Devs: []dev{{Minor: &minor}}}}}
	b := state{PEs: slices.Clone(a.PEs)} // the outer slice copied, its elements' slices shared
	shared, unset, _ := sharing(&a, &b)
	want := []string{"state.PEs[0].UUIDs", "state.PEs[0].Devs", "state.PEs[0].Devs[0].Minor"}
	if !slices.Equal(shared, want) || len(unset) != 0 {
		t.Fatalf("shared %v, unset %v; want shared %v", shared, unset, want)
	}
	deep := state{PEs: []pe{{UUIDs: []string{"u"}, Devs: []dev{{Minor: new(int)}}}}}
	if shared, _, checked := sharing(&a, &deep); len(shared) != 0 || checked != 4 {
		t.Fatalf("a deep copy: shared %v, %d checked, want none shared of 4", shared, checked)
	}
}
