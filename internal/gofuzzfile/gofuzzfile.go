// Package gofuzzfile reads and writes the corpus files of Go's native
// fuzzing (`go test fuzz v1`), the one codec bitparity uses for seed files,
// imports from the fuzz cache and the files fuzztest writes.
package gofuzzfile

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// Header is the first line of a `go test -fuzz` corpus file.
const Header = "go test fuzz v1"

// Parse parses a `go test fuzz v1` corpus file (testdata/fuzz/FuzzX/*
// or $GOCACHE/fuzz/<pkg>/FuzzX/*) into its values, in order: one Go
// expression a line, each []byte("..."), string("..."), bool(..),
// byte(..), rune(..), int*(..), uint*(..), float32(..), float64(..) or
// math.Float32frombits(..)/math.Float64frombits(..), as Go's
// internal/fuzz writes them. Files over spec.MaxFileBytes are refused.
func Parse(data []byte) ([]any, error) {
	if len(data) > spec.MaxFileBytes {
		return nil, fmt.Errorf("go fuzz file: %d bytes, the limit is %d", len(data), spec.MaxFileBytes)
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) == 0 || string(bytes.TrimSpace(lines[0])) != Header {
		return nil, fmt.Errorf("go fuzz file: first line is not %q", Header)
	}
	var vals []any
	for i, line := range lines[1:] {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		v, err := parseGoFuzzValue(string(line))
		if err != nil {
			return nil, fmt.Errorf("go fuzz file: line %d: %w", i+2, err)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, errors.New("go fuzz file: no values")
	}
	return vals, nil
}

func parseGoFuzzValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", truncate(line), err)
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q: want a conversion such as []byte(\"...\")", truncate(line))
	}
	arg := call.Args[0]
	lit := func() (*ast.BasicLit, bool) {
		if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.SUB {
			if b, ok := u.X.(*ast.BasicLit); ok {
				return &ast.BasicLit{Kind: b.Kind, Value: "-" + b.Value}, true
			}
		}
		b, ok := arg.(*ast.BasicLit)
		return b, ok
	}
	if arr, ok := call.Fun.(*ast.ArrayType); ok {
		if id, ok := arr.Elt.(*ast.Ident); ok && arr.Len == nil && (id.Name == "byte" || id.Name == "uint8") {
			b, ok := lit()
			if !ok || b.Kind != token.STRING {
				return nil, errors.New("[]byte wants a string literal")
			}
			s, err := strconv.Unquote(b.Value)
			if err != nil {
				return nil, err
			}
			return []byte(s), nil
		}
		return nil, fmt.Errorf("%q: unsupported type", truncate(line))
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "math" {
			b, ok := lit()
			if !ok || b.Kind != token.INT {
				return nil, fmt.Errorf("math.%s wants an integer literal", sel.Sel.Name)
			}
			switch sel.Sel.Name {
			case "Float32frombits":
				u, err := strconv.ParseUint(b.Value, 0, 32)
				return math.Float32frombits(uint32(u)), err
			case "Float64frombits":
				u, err := strconv.ParseUint(b.Value, 0, 64)
				return math.Float64frombits(u), err
			}
		}
		return nil, fmt.Errorf("%q: unsupported call", truncate(line))
	}
	id, ok := call.Fun.(*ast.Ident)
	if !ok {
		return nil, fmt.Errorf("%q: unsupported type", truncate(line))
	}
	b, ok := lit()
	if !ok {
		if x, isID := arg.(*ast.Ident); isID && id.Name == "bool" && (x.Name == "true" || x.Name == "false") {
			return x.Name == "true", nil
		}
		return nil, fmt.Errorf("%q: want a literal argument", truncate(line))
	}
	switch id.Name {
	case "string":
		if b.Kind != token.STRING {
			return nil, errors.New("string wants a string literal")
		}
		return strconv.Unquote(b.Value)
	case "byte", "uint8", "rune", "int32":
		var v int64
		var err error
		if b.Kind == token.CHAR {
			var r rune
			r, _, _, err = strconv.UnquoteChar(strings.Trim(b.Value, "'"), '\'')
			v = int64(r)
		} else {
			v, err = strconv.ParseInt(b.Value, 0, 32)
		}
		if err != nil {
			return nil, err
		}
		if id.Name == "byte" || id.Name == "uint8" {
			return byte(v), nil
		}
		return int32(v), nil
	case "int", "int64":
		v, err := strconv.ParseInt(b.Value, 0, 64)
		if id.Name == "int" {
			return int(v), err
		}
		return v, err
	case "int8", "int16":
		v, err := strconv.ParseInt(b.Value, 0, 16)
		if id.Name == "int8" {
			return int8(v), err
		}
		return int16(v), err
	case "uint", "uint64", "uint16", "uint32":
		v, err := strconv.ParseUint(b.Value, 0, 64)
		switch id.Name {
		case "uint":
			return uint(v), err
		case "uint16":
			return uint16(v), err
		case "uint32":
			return uint32(v), err
		}
		return v, err
	case "float32":
		v, err := strconv.ParseFloat(b.Value, 32)
		return float32(v), err
	case "float64":
		return strconv.ParseFloat(b.Value, 64)
	}
	return nil, fmt.Errorf("%q: unsupported type %s", truncate(line), id.Name)
}

// Format writes values as a `go test fuzz v1` corpus file, the
// format `go test` reads from testdata/fuzz/FuzzX/. []byte and string are
// quoted with strconv.Quote; other values use Go syntax.
func Format(vals ...any) ([]byte, error) {
	var b strings.Builder
	b.WriteString(Header + "\n")
	for _, v := range vals {
		switch x := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(x)))
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(x))
		case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
			fmt.Fprintf(&b, "%T(%v)\n", x, x)
		case float32:
			fmt.Fprintf(&b, "math.Float32frombits(0x%x)\n", math.Float32bits(x))
		case float64:
			fmt.Fprintf(&b, "math.Float64frombits(0x%x)\n", math.Float64bits(x))
		default:
			return nil, fmt.Errorf("go fuzz file: unsupported value type %T", v)
		}
	}
	return []byte(b.String()), nil
}

// truncate shortens a hostile line for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
