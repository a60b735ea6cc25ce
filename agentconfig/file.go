package agentconfig

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// File is a parsed config file: its keys' values in the file's order.
type File struct {
	Path    string
	entries []entry
}

type entry struct {
	key  Key
	val  Value
	line int
}

// Keys returns the file keys set in f, in the file's order.
func (f *File) Keys() []string {
	out := make([]string, len(f.entries))
	for i, e := range f.entries {
		out[i] = e.key.Name()
	}
	return out
}

// Load reads and parses the config file at path.
func Load(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	return Parse(path, src)
}

// Parse parses src, named path in errors: HCL, or JSON when path ends in
// .json. It checks every key is known and every value has its key's type
// and parses (durations, sizes, addresses, rlimits); bounds that depend on
// other settings are Agent.Validate's.
func Parse(path string, src []byte) (*File, error) {
	p := hclparse.NewParser()
	var hf *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(path, ".json") {
		hf, diags = p.ParseJSON(src, path)
	} else {
		hf, diags = p.ParseHCL(src, path)
	}
	if diags.HasErrors() {
		return nil, diagError(path, diags)
	}
	attrs, diags := hf.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, diagError(path, diags)
	}
	list := make([]*hcl.Attribute, 0, len(attrs))
	for _, at := range attrs {
		list = append(list, at)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Range.Start.Byte < list[j].Range.Start.Byte })
	f := &File{Path: path}
	for _, at := range list {
		line := at.NameRange.Start.Line
		fail := func(err error) error {
			return &Error{Where: fmt.Sprintf("%s:%d: %s", path, line, at.Name), Err: err}
		}
		k, ok := Lookup(at.Name)
		if !ok || strings.Contains(at.Name, "-") {
			msg := "unknown key"
			if s := suggest(at.Name); s != "" {
				msg += "; did you mean " + s + "?"
			}
			return nil, fail(errors.New(msg))
		}
		cv, diags := at.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fail(errors.New(diagText(diags[0])))
		}
		v, err := convert(k.Kind, cv)
		if err != nil {
			return nil, fail(err)
		}
		// Run the key's own checks now, so a bad value is refused with its
		// line even by a caller that only parses (--validate, tests).
		scratch := Default()
		if err := k.set(&scratch, v); err != nil {
			return nil, fail(err)
		}
		f.entries = append(f.entries, entry{k, v, line})
	}
	return f, nil
}

// convert checks a value's type against the key's kind.
func convert(kind Kind, v cty.Value) (Value, error) {
	bad := func() (Value, error) {
		return Value{}, fmt.Errorf("want %s, got %s", kind, describe(v))
	}
	if v.IsNull() || !v.IsKnown() {
		return bad()
	}
	t := v.Type()
	switch kind {
	case String:
		if t != cty.String {
			return bad()
		}
		return Value{Str: v.AsString()}, nil
	case Int:
		if t != cty.Number {
			return bad()
		}
		bf := v.AsBigFloat()
		if !bf.IsInt() {
			return bad()
		}
		i, acc := bf.Int64()
		if acc != big.Exact || int64(int(i)) != i {
			return Value{}, fmt.Errorf("%s is out of range", bf.Text('f', -1))
		}
		return Value{Int: int(i)}, nil
	case Bool:
		if t != cty.Bool {
			return bad()
		}
		return Value{Bool: v.True()}, nil
	case Duration:
		if t != cty.String {
			return bad()
		}
		d, err := time.ParseDuration(v.AsString())
		if err != nil {
			return Value{}, fmt.Errorf("%q is not a duration such as \"3s\", \"5m\" or \"24h\"", v.AsString())
		}
		return Value{Dur: d}, nil
	case Size:
		switch t {
		case cty.String:
			return Value{Str: v.AsString()}, nil
		case cty.Number:
			bf := v.AsBigFloat()
			if !bf.IsInt() || bf.Sign() < 0 {
				return bad()
			}
			return Value{Str: bf.Text('f', 0)}, nil
		}
		return bad()
	case List:
		if !t.IsListType() && !t.IsTupleType() && !t.IsSetType() {
			return bad()
		}
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsNull() || e.Type() != cty.String {
				return bad()
			}
			out = append(out, e.AsString())
		}
		return Value{Strs: out}, nil
	}
	return bad()
}

func describe(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case v.Type() == cty.String:
		return fmt.Sprintf("the string %q", v.AsString())
	case v.Type() == cty.Number:
		return "the number " + v.AsBigFloat().Text('g', -1)
	case v.Type() == cty.Bool:
		return fmt.Sprintf("%v", v.True())
	case v.Type().IsTupleType() || v.Type().IsListType():
		return "a list with a value that is not a string"
	}
	return v.Type().FriendlyName()
}

// diagError turns HCL's first error into FILE:LINE: what is wrong.
func diagError(path string, diags hcl.Diagnostics) error {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := path
		if d.Subject != nil {
			where = fmt.Sprintf("%s:%d", path, d.Subject.Start.Line)
		}
		return &Error{Where: where, Err: errors.New(diagText(d))}
	}
	return &Error{Where: path, Err: errors.New(diags.Error())}
}

func diagText(d *hcl.Diagnostic) string {
	s := strings.TrimSuffix(d.Summary, ".")
	if d.Detail != "" {
		s += ": " + strings.TrimSuffix(d.Detail, ".")
	}
	return s
}
