package main

// The real kube-apiserver, run in this process through its own options and Run function
// (what cmd/kube-apiserver's cobra command does, minus cobra): cobra's command would set
// up its own signal handler at construction, whose context the caller cannot cancel, and
// we need to stop the apiserver before etcd on SIGTERM.

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// apiserverArgs are the kube-apiserver flags this harness passes; cfg.apiserverArgs
// (--apiserver-arg) come after them, so a test can override any of them (or add to a list
// flag such as --disable-admission-plugins).
func apiserverArgs(cfg *config, keys *pki, etcdURL, tokenFile string, port int) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-compaction-interval=" + cfg.compaction.String(),
		"--watch-cache=" + strconv.FormatBool(cfg.watchCache),
		"--secure-port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1",
		// The address the `kubernetes` Service's endpoints advertise. A loopback address
		// is refused there (kubernetes#121942); 10.0.0.1 is the Service's own ClusterIP,
		// never dialled by anyone, so the lease reconciler keeps a realistic
		// `kubernetes` Endpoints/EndpointSlice pair that meshsync syncs like any other.
		"--advertise-address=10.0.0.1",
		"--endpoint-reconciler-type=" + cfg.endpointReconciler,
		"--service-cluster-ip-range=10.0.0.0/16",
		"--authorization-mode=RBAC,Node",
		"--token-auth-file=" + tokenFile,
		"--tls-cert-file=" + keys.serverCert,
		"--tls-private-key-file=" + keys.serverKey,
		// Unused while --tls-cert-file is given; pointed into the data dir so that nothing
		// is ever written to the default /var/run/kubernetes.
		"--cert-dir=" + keys.dir,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + keys.saKey,
		"--service-account-signing-key-file=" + keys.saKey,
	}
	if !cfg.saAdmission {
		// The ServiceAccount admission plugin refuses a pod until its namespace has a
		// `default` ServiceAccount, which the serviceaccount-controller creates a moment
		// after the namespace: a test creating a namespace and then a pod would race it.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	if cfg.featureGates != "" {
		args = append(args, "--feature-gates="+cfg.featureGates)
	}
	return append(args, cfg.apiserverArgs...)
}

// apiserver is a parsed, not yet started kube-apiserver.
type apiserver struct {
	opts *options.ServerRunOptions
}

// newAPIServer parses @args into the apiserver's own options; it will serve on @ln (a
// listener on --secure-port, bound by the caller so that the port is known before).
// Parsing happens before the controller-manager's: both feed the one process-wide
// feature-gate registry, which main freezes with Set() once every flag is parsed.
func newAPIServer(args []string, ln net.Listener) (*apiserver, error) {
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-apiserver flags: %w", err)
	}
	s.SecureServing.Listener = ln
	s.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	return &apiserver{opts: s}, nil
}

// run completes and validates the options and serves until @ctx is cancelled; it returns
// once the server has shut down (nil) or failed to start or serve (an error).
func (a *apiserver) run(ctx context.Context) error {
	// As the apiserver's cobra command does: the loopback clients it uses internally
	// must not log the deprecation warnings their own server sends them.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	completed, err := a.opts.Complete(ctx)
	if err != nil {
		return fmt.Errorf("kube-apiserver options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fmt.Errorf("kube-apiserver options: %w", utilerrors.NewAggregate(errs))
	}
	return app.Run(ctx, completed)
}
