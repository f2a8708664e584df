package meshsync

import (
	"context"
	"time"

	"github.com/meshery/meshkit/broker"
)

// Output modes Run accepts, as upstream's library.
const (
	OutputModeBroker = "broker"
	OutputModeFile   = "file"
)

// Options configures one Run. The fields and their defaults are upstream's; see
// doc/embedding.md for the ones the C engine accepts without using.
type Options struct {
	OutputMode            string
	StopAfterDuration     time.Duration
	KubeConfig            []byte
	OutputFileName        string
	OutputExtendedFile    bool
	BrokerHandler         broker.Handler
	Context               context.Context
	OnlyK8sNamespaces     []string
	OnlyK8sResources      []string
	Version               string
	PingEndpoint          string
	MeshkitConfigProvider string

	// ready is called once the initial state has been handed on (tests only: upstream's
	// Options has no such field).
	ready func()
	// held is called when the engine is first told to hold its events (tests only).
	held func()
}

// OptionsSetter changes one field of Options.
type OptionsSetter func(*Options)

// DefaultOptions are what Run uses where no setter says otherwise.
var DefaultOptions = Options{
	OutputMode:        OutputModeBroker,
	StopAfterDuration: -1,
	Version:           "", // the engine's own: see EngineVersion
	PingEndpoint:      ":8222/connz",
}

// WithOutputMode chooses "broker" (the default) or "file".
func WithOutputMode(value string) OptionsSetter {
	return func(o *Options) { o.OutputMode = value }
}

// WithStopAfterDuration ends Run after that long; a negative duration (the default) never.
func WithStopAfterDuration(value time.Duration) OptionsSetter {
	return func(o *Options) { o.StopAfterDuration = value }
}

// WithKubeConfig gives the kubeconfig's contents; without it the configuration is found as
// the daemon finds it (in-cluster, KUBECONFIG, ~/.kube/config).
func WithKubeConfig(value []byte) OptionsSetter {
	return func(o *Options) { o.KubeConfig = value }
}

// WithOutputFileName names the snapshot file of file mode.
func WithOutputFileName(value string) OptionsSetter {
	return func(o *Options) { o.OutputFileName = value }
}

// WithOutputExtendedFile also writes every event to the extended file in file mode.
func WithOutputExtendedFile(value bool) OptionsSetter {
	return func(o *Options) { o.OutputExtendedFile = value }
}

// WithBrokerHandler publishes the events of broker mode to the given handler instead of
// connecting to BROKER_URL.
func WithBrokerHandler(value broker.Handler) OptionsSetter {
	return func(o *Options) { o.BrokerHandler = value }
}

// WithContext ends Run when the context is done.
func WithContext(value context.Context) OptionsSetter {
	return func(o *Options) { o.Context = value }
}

// WithOnlyK8sNamespaces passes on the objects of these namespaces only.
func WithOnlyK8sNamespaces(values ...string) OptionsSetter {
	return func(o *Options) { o.OnlyK8sNamespaces = values }
}

// WithOnlyK8sResources watches these resource types only (names as -outputResources takes).
func WithOnlyK8sResources(values []string) OptionsSetter {
	return func(o *Options) { o.OnlyK8sResources = values }
}

// WithVersion sets the version string the run reports in its meshsync-meta reply; without
// it (or with ""), the engine's own version (EngineVersion), never upstream's "Not Set".
func WithVersion(value string) OptionsSetter {
	return func(o *Options) { o.Version = value }
}

// WithPingEndpoint is accepted for compatibility; the engine checks the broker itself.
func WithPingEndpoint(value string) OptionsSetter {
	return func(o *Options) { o.PingEndpoint = value }
}

// WithMeshkitConfigProvider is accepted for compatibility; the engine keeps no meshkit
// configuration store.
func WithMeshkitConfigProvider(value string) OptionsSetter {
	return func(o *Options) { o.MeshkitConfigProvider = value }
}
