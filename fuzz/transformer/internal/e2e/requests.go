package e2e

import "fmt"

// Request is one sequence: a prompt followed by a response, both given
// (teacher forcing).
type Request struct {
	Tokens []int32 // prompt then response
	Prompt int     // prompt length, >= 1
	// Arrive is the inference step at which the request joins the engine.
	Arrive int
	// Reported is how many response positions the engine reports (the
	// first Reported); the request leaves after them (max tokens reached or
	// aborted). The train path computes every position.
	Reported int
}

// Response returns the response length.
func (q Request) Response() int { return len(q.Tokens) - q.Prompt }

func (q Request) validate(vocab int) error {
	if q.Prompt < 1 || q.Response() < 1 {
		return fmt.Errorf("request: prompt %d of %d tokens: want a prompt and a response of at least one token each", q.Prompt, len(q.Tokens))
	}
	if q.Reported < 0 || q.Reported > q.Response() {
		return fmt.Errorf("request: %d reported positions of a %d-token response", q.Reported, q.Response())
	}
	if q.Arrive < 0 {
		return fmt.Errorf("request: arrival step %d", q.Arrive)
	}
	for i, t := range q.Tokens {
		if t < 0 || int(t) >= vocab {
			return fmt.Errorf("request: token %d = %d outside vocab %d", i, t, vocab)
		}
	}
	return nil
}

// Plan derives n requests from seed. Request r draws from
// newRNG(seed, plan, r):
//
//	length   L ∈ [max(2, ceil(seqLen/2)), max(2, seqLen)]
//	prompt   p ∈ [1, L-1]
//	arrival  0 for r = 0, else ∈ [0, n-1]
//	reported with probability 1/4 (and a response of 2 or more) ∈ [1, L-p-1],
//	         otherwise L-p (every position)
//
// and its tokens, uniform ids, from newRNG(seed, tokens, r).
func Plan(seed uint64, n, seqLen, vocab int) []Request {
	reqs := make([]Request, n)
	hi := max(2, seqLen)
	lo := max(2, (seqLen+1)/2)
	for r := range reqs {
		g := newRNG(seed, streamPlan, uint64(r))
		L := g.between(lo, hi)
		p := g.between(1, L-1)
		q := Request{Prompt: p, Reported: L - p}
		if r > 0 {
			q.Arrive = g.intn(n)
		}
		if g.intn(4) == 0 && L-p >= 2 {
			q.Reported = g.between(1, L-p-1)
		}
		t := newRNG(seed, streamTokens, uint64(r))
		q.Tokens = make([]int32, L)
		for i := range q.Tokens {
			q.Tokens[i] = int32(t.intn(vocab))
		}
		reqs[r] = q
	}
	return reqs
}

// Positions numbers the response positions: position positionBase[r]+j is
// the log-prob of response token j of request r (token Prompt+j, predicted
// from the logits at token Prompt+j-1).
func positionBase(reqs []Request) (base []int, total int) {
	base = make([]int, len(reqs))
	for r, q := range reqs {
		base[r] = total
		total += q.Response()
	}
	return base, total
}

// tokenBase numbers the tokens: token tokenBase[r]+i is token i of
// request r (the index of taps).
func tokenBase(reqs []Request) (base []int, total int) {
	base = make([]int, len(reqs))
	for r, q := range reqs {
		base[r] = total
		total += len(q.Tokens)
	}
	return base, total
}
