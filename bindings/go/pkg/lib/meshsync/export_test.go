package meshsync

// WithReady calls ready once the run's initial state has been handed on: what the tests
// wait for instead of time. Not part of the package's API.
func WithReady(ready func()) OptionsSetter {
	return func(o *Options) { o.ready = ready }
}

// WithHeld calls held when the engine is first told to hold its events because the handler
// does not keep up.
func WithHeld(held func()) OptionsSetter {
	return func(o *Options) { o.held = held }
}
