package oracle_test

import (
	"fmt"
	"math"

	"github.com/bitparity/bitparity/oracle"
)

func ExampleULPDistance() {
	negZero := float32(math.Copysign(0, -1))
	fmt.Printf("%+v\n", oracle.ULPDistance(oracle.BF16, 0, negZero))
	fmt.Printf("%+v\n", oracle.ULPDistance(oracle.BF16, 1, 1+1.0/128))
	// Output:
	// {ULPs:0 SameBits:false SignedZero:true NaN:false}
	// {ULPs:1 SameBits:false SignedZero:false NaN:false}
}

func ExampleBF16FromF32() {
	tie := math.Float32frombits(0x3f808000) // halfway between bf16 0x3f80 and 0x3f81
	snan := math.Float32frombits(0x7f800001)
	fmt.Printf("%04x %04x\n", oracle.BF16FromF32(tie), oracle.BF16FromF32(snan))
	// Output: 3f80 7fc0
}

func ExampleRMSNorm() {
	in := oracle.RMSNormInput{X: []float32{1, 2, 3, 4}, W: []float32{1, 1}, Rows: 2, Hidden: 2, Eps: 1e-6, Out: oracle.BF16}
	s := oracle.RMSNormSchedule{Reduce: oracle.Sequential}
	out, err := oracle.RMSNorm(in, s, []int{1}) // row 1 only: 3·0.28284 and 4·0.28284 in bf16
	if err != nil {
		panic(err)
	}
	fmt.Println(oracle.Hex(oracle.BF16, out[0]), oracle.Hex(oracle.BF16, out[1]))
	// Output: 3f59 3f91
}
