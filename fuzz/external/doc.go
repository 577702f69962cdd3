// Package external makes any process that speaks the bitparity process
// protocol (docs/protocol.md) a target.Target: a PyTorch op, a Triton
// kernel, a NumPy reference, a binary in any language.
//
// The harness starts the adapter once (/bin/sh -c CMDLINE) and talks to it
// over stdin and stdout in length-prefixed frames, each a safetensors
// document: a hello handshake (protocol version, op, the adapter's name,
// its invariance claim, its declared oracle schedule or ulp bound), then
// one request per batch (op, dtypes, eps and the input tensors) answered by
// one reply (the output tensor "y"). stderr is the adapter's log.
//
// A process that crashes, hangs past the per-request timeout or answers a
// frame that breaks the protocol is killed; Run returns an error wrapping
// target.ErrTargetCrashed (naming the frame and field, with the tail of the
// adapter's stderr) and the next Run starts a new process, so a campaign
// records a crash finding and goes on.
//
// An adapter may also be a model route (hello op "transformer"): it runs a
// whole decoder through a training path and an inference engine, and
// CheckModel compares their log-probs and per-site taps (modelcheck.go).
// ModelSource makes a route a composite source of fuzz.Campaign
// (modelcampaign.go); ModelChecker is what fuzz.Check takes for a model
// case. Nothing registers them.
//
// The Python adapter kit adapters/python (bitparity_adapter) implements the
// adapter side; adapters/numpy_ops.py, torch_ops.py, jax_ops.py, hf_model.py
// and adapters/examples are built on it.
package external
