module github.com/bitparity/bitparity/examples

go 1.26

require github.com/bitparity/bitparity v0.0.0

require (
	github.com/leanovate/gopter v0.2.11 // indirect
	github.com/x448/float16 v0.8.4 // indirect
)

replace github.com/bitparity/bitparity => ..
