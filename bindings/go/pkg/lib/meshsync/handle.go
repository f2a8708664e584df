package meshsync

// #include <stdint.h>
import "C"

import "runtime/cgo"

// cgoRun finds the run a callback from the engine belongs to: C holds only the handle's
// number, never a Go pointer.
func cgoRun(handle C.uintptr_t) *run {
	return cgo.Handle(handle).Value().(*run)
}
