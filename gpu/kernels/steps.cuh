// steps.cuh: what one step of a scan's bulk check does with each row and
// with its record (check_steps, compare.cu), for CUDA and for plain C
// alike, as digest.cuh is: TestStepsCMatchesGo (gpu) compiles it with the
// system C compiler, runs a step's blocks one after another and reads the
// record with the Go code that reads the device's.
//
// A step's output has nrows rows; row r has digest d and taps' digest t
// (0 without taps). It differs from a side (the rows alone, the reference
// batch) when d differs from the side's digest of row r, or, when
// cmp_taps, t from the side's taps' digest. st_row, for each row:
//
//	differs from alone   sets bit r of bits[0..words), counted
//	differs from ref     sets bit r of bits[words..2*words) (ref not 0)
//	r < panel_rows       panel[r] = d, panel[panel_rows + r] = t
//	always               adds mix(d ^ r*K), and when cmp_taps
//	                     mix(t ^ ~(r*K)), to the step's sum mod 2^64
//	                     (mix: splitmix64's finalizer, K = 0x9e3779b97f4a7c15)
//
// After every row, st_record writes the step's record (the host's
// page-locked memory on a device) and leaves bits zero for the next step:
//
//	record[0..4)     the count of rows differing from alone (u32)
//	record[8..16)    the sum
//	record[16..)     when the count is not 0: panel (2*panel_rows u64),
//	                 then bits (2*words u32)
#pragma once

#ifdef __CUDACC__
#define ST_FN __device__ __forceinline__
#define ST_OR(p, v) atomicOr((p), (v))
#define ST_TAKE(p) atomicExch((p), 0u)
#define ST_READ(p) (*(volatile const unsigned long long *)(p))
#else
#define ST_FN static inline
#define ST_OR(p, v) (*(p) |= (v))
#define ST_TAKE(p) st_take(p)
#define ST_READ(p) (*(p))
static inline unsigned st_take(unsigned *p)
{
	unsigned v = *p;
	*p = 0;
	return v;
}
#endif

typedef unsigned long long st_u64;

// StepCheck is what a step's rows are compared with (digests of the rows
// alone and of the reference batch, one a row; taps' nil when not
// compared, ref's nil without a reference batch) and where a step keeps
// what it found (panel: 2*panel_rows digests; bits: 2*words words).
typedef struct {
	const st_u64 *alone, *alone_taps, *ref, *ref_taps;
	long long panel_rows, words;
	st_u64 *panel;
	unsigned *bits;
	int cmp_taps;
} StepCheck;

#define ST_K 0x9e3779b97f4a7c15ull

// st_mix is splitmix64's finalizer: a bijection of 64-bit words that
// spreads every input bit over the output.
ST_FN st_u64 st_mix(st_u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// StepSides are the digests row r is compared with: alone, alone's taps,
// ref, ref's taps (0 where c has none). st_sides reads them before the
// row is digested, so that their loads overlap its reads.
typedef struct {
	st_u64 alone, alone_taps, ref, ref_taps;
} StepSides;

ST_FN StepSides st_sides(const StepCheck *c, long long r)
{
	StepSides s = {c->alone[r], 0, 0, 0};
	if (c->cmp_taps)
		s.alone_taps = c->alone_taps[r];
	if (c->ref) {
		s.ref = c->ref[r];
		if (c->cmp_taps)
			s.ref_taps = c->ref_taps[r];
	}
	return s;
}

// st_row checks row r, of digest d and taps' digest t, against its sides
// s (st_sides); adds its part to *sum and returns 1 when it differs from
// its row alone.
ST_FN int st_row(const StepCheck *c, long long r, st_u64 d, st_u64 t, StepSides s, st_u64 *sum)
{
	const unsigned bit = 1u << (r % 32);
	const int alone = d != s.alone || (c->cmp_taps && t != s.alone_taps);
	if (alone)
		ST_OR(&c->bits[r / 32], bit);
	if (c->ref && (d != s.ref || (c->cmp_taps && t != s.ref_taps)))
		ST_OR(&c->bits[c->words + r / 32], bit);
	if (r < c->panel_rows) {
		c->panel[r] = d;
		c->panel[c->panel_rows + r] = t;
	}
	*sum += st_mix(d ^ ((st_u64)r * ST_K));
	if (c->cmp_taps)
		*sum += st_mix(t ^ ~((st_u64)r * ST_K));
	return alone;
}

// st_record is thread tid's share, of n threads, of writing the record of
// a step of nrows rows that count rows differ in and whose sum is sum, to
// record, and of zeroing c's bits. Thread 0 writes the count last.
ST_FN void st_record(const StepCheck *c, long long nrows, st_u64 count, st_u64 sum, char *record, long long tid, long long n)
{
	st_u64 *host_panel = (st_u64 *)(record + 16);
	unsigned *host_bits = (unsigned *)(record + 16 + 16 * c->panel_rows);
	const long long w = (nrows + 31) / 32;
	if (count > 0) {
		for (long long i = tid; i < 2 * c->panel_rows; i += n)
			host_panel[i] = ST_READ(&c->panel[i]);
	}
	for (long long i = tid; i < w; i += n) {
		const unsigned a = ST_TAKE(&c->bits[i]), b = ST_TAKE(&c->bits[c->words + i]);
		if (count > 0) {
			host_bits[i] = a;
			host_bits[c->words + i] = b;
		}
	}
	if (tid == 0) {
		*(volatile st_u64 *)(record + 8) = sum;
		*(volatile unsigned *)record = (unsigned)count;
	}
}
