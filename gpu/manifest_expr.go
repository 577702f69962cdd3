package gpu

import (
	"fmt"
	"strings"
)

// Expr is a launch-geometry expression of a kernel manifest: integers,
// shape names (rows, hidden, m, k, n, vocab, block), the binary operators
// + - * / % (integer division truncates; / and % by zero are errors), unary
// minus, parentheses, and the functions cdiv(a, b) = (a+b-1)/b (ceiling
// division), min(a, b) and max(a, b). Precedence is the usual one: * / %
// bind tighter than + -, all left-associative.
type Expr struct {
	src  string
	root node
}

// String returns the expression as written.
func (e *Expr) String() string { return e.src }

// node is one node of a parsed expression.
type node interface {
	eval(env map[string]int64) (int64, error)
	names(dst []string) []string
}

type num int64

func (n num) eval(map[string]int64) (int64, error) { return int64(n), nil }
func (n num) names(dst []string) []string          { return dst }

type name struct {
	id  string
	pos int
}

func (n name) eval(env map[string]int64) (int64, error) {
	v, ok := env[n.id]
	if !ok {
		return 0, fmt.Errorf("column %d: unknown name %q", n.pos+1, n.id)
	}
	return v, nil
}
func (n name) names(dst []string) []string { return append(dst, n.id) }

type binop struct {
	op   string
	a, b node
	pos  int
}

// limit bounds every intermediate value: geometry is far below it, and it
// keeps products from overflowing int64.
const exprLimit = int64(1) << 40

func (o binop) eval(env map[string]int64) (int64, error) {
	a, err := o.a.eval(env)
	if err != nil {
		return 0, err
	}
	b, err := o.b.eval(env)
	if err != nil {
		return 0, err
	}
	var v int64
	switch o.op {
	case "+":
		v = a + b
	case "-":
		v = a - b
	case "*":
		v = a * b
	case "/", "%", "cdiv":
		if b == 0 {
			return 0, fmt.Errorf("column %d: %s by zero", o.pos+1, map[string]string{"/": "division", "%": "remainder", "cdiv": "cdiv"}[o.op])
		}
		switch o.op {
		case "/":
			v = a / b
		case "%":
			v = a % b
		default:
			v = (a + b - 1) / b
		}
	case "min":
		v = min(a, b)
	case "max":
		v = max(a, b)
	}
	if v > exprLimit || v < -exprLimit {
		return 0, fmt.Errorf("column %d: value %d out of range", o.pos+1, v)
	}
	return v, nil
}

func (o binop) names(dst []string) []string { return o.b.names(o.a.names(dst)) }

// ParseExpr parses a geometry expression. Errors give the column (1-based)
// where parsing stopped.
func ParseExpr(src string) (*Expr, error) {
	p := &exprParser{src: src}
	p.next()
	if p.tok == "" && p.err == nil {
		return nil, fmt.Errorf("empty expression")
	}
	root := p.sum()
	if p.err == nil && p.tok != "" {
		p.fail("unexpected %q", p.tok)
	}
	if p.err != nil {
		return nil, p.err
	}
	return &Expr{src: src, root: root}, nil
}

// Eval evaluates the expression with the shape names in env.
func (e *Expr) Eval(env map[string]int64) (int64, error) {
	v, err := e.root.eval(env)
	if err != nil {
		return 0, fmt.Errorf("expression %q: %w", e.src, err)
	}
	return v, nil
}

// Names lists the names the expression uses, in order of appearance.
func (e *Expr) Names() []string { return e.root.names(nil) }

type exprParser struct {
	src    string
	at     int    // byte offset after the current token
	tok    string // current token; "" at the end
	tokPos int
	err    error
}

func (p *exprParser) fail(format string, a ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("column %d: %s", p.tokPos+1, fmt.Sprintf(format, a...))
	}
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// next reads the next token.
func (p *exprParser) next() {
	for p.at < len(p.src) && (p.src[p.at] == ' ' || p.src[p.at] == '\t') {
		p.at++
	}
	p.tokPos = p.at
	if p.at >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.at]
	end := p.at + 1
	switch {
	case isDigit(c):
		for end < len(p.src) && isDigit(p.src[end]) {
			end++
		}
	case isLetter(c):
		for end < len(p.src) && (isLetter(p.src[end]) || isDigit(p.src[end])) {
			end++
		}
	case strings.IndexByte("+-*/%(),", c) >= 0:
	default:
		p.tok = string(c)
		p.fail("unexpected character %q", c)
		return
	}
	p.tok = p.src[p.at:end]
	p.at = end
}

// sum = term { ("+"|"-") term }
func (p *exprParser) sum() node {
	n := p.term()
	for p.err == nil && (p.tok == "+" || p.tok == "-") {
		op, pos := p.tok, p.tokPos
		p.next()
		n = binop{op: op, a: n, b: p.term(), pos: pos}
	}
	return n
}

// term = unary { ("*"|"/"|"%") unary }
func (p *exprParser) term() node {
	n := p.unary()
	for p.err == nil && (p.tok == "*" || p.tok == "/" || p.tok == "%") {
		op, pos := p.tok, p.tokPos
		p.next()
		n = binop{op: op, a: n, b: p.unary(), pos: pos}
	}
	return n
}

// unary = "-" unary | primary
func (p *exprParser) unary() node {
	if p.tok == "-" {
		pos := p.tokPos
		p.next()
		return binop{op: "-", a: num(0), b: p.unary(), pos: pos}
	}
	return p.primary()
}

// primary = integer | name | func "(" sum "," sum ")" | "(" sum ")"
func (p *exprParser) primary() node {
	if p.err != nil {
		return num(0)
	}
	tok, pos := p.tok, p.tokPos
	switch {
	case tok == "":
		p.fail("expected a number, a name or \"(\" at the end")
		return num(0)
	case isDigit(tok[0]):
		var v int64
		for _, c := range []byte(tok) {
			v = v*10 + int64(c-'0')
			if v > exprLimit {
				p.fail("number %s too large", tok)
				return num(0)
			}
		}
		p.next()
		return num(v)
	case isLetter(tok[0]):
		p.next()
		if tok != "cdiv" && tok != "min" && tok != "max" {
			if p.tok == "(" {
				p.fail("unknown function %q (cdiv, min, max)", tok)
			}
			return name{id: tok, pos: pos}
		}
		if p.tok != "(" {
			p.fail("expected \"(\" after %s", tok)
			return num(0)
		}
		p.next()
		a := p.sum()
		if p.err == nil && p.tok != "," {
			p.fail("expected \",\" in %s(a, b)", tok)
		}
		p.next()
		b := p.sum()
		if p.err == nil && p.tok != ")" {
			p.fail("expected \")\" to close %s(", tok)
		}
		p.next()
		return binop{op: tok, a: a, b: b, pos: pos}
	case tok == "(":
		p.next()
		n := p.sum()
		if p.err == nil && p.tok != ")" {
			p.fail("expected \")\"")
		}
		p.next()
		return n
	}
	p.fail("expected a number, a name or \"(\", got %q", tok)
	return num(0)
}
