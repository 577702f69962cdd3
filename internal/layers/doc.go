// Package layers holds the import rule of the repository as a test:
// which package of bitparity may import which (docs/architecture.md
// explains the layers). It has no code of its own.
package layers
