module meshsync/bindings/go

go 1.26.4

require (
	github.com/meshery/meshkit v1.0.22
	go.uber.org/goleak v1.3.0
	meshsync.invalid/bench/upstream-hot-path v0.0.0
)

// The rebuild of upstream's per-event work (bench/upstream-hot-path), for the embedded-mode
// benchmark's comparison: upstream's own module is not served by the module proxy.
replace meshsync.invalid/bench/upstream-hot-path => ../../bench/upstream-hot-path

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gofrs/uuid v4.4.0+incompatible // indirect
	github.com/sirupsen/logrus v1.9.4-0.20230606125235-dd1b4c2e81af // indirect
	golang.org/x/sys v0.46.0 // indirect
	gorm.io/gorm v1.31.2 // indirect
)
