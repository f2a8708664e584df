package main

// The controllers of kube-controller-manager that meshsync's tests depend on, run in this
// process through the controller manager's own options and Run (as its cobra command
// does). They talk to our apiserver over HTTPS like an external controller manager would,
// with the admin token, so their writes show in watches exactly as in a real cluster.

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app/options"
)

// defaultControllers are the controllers run unless --controllers says otherwise:
//   - namespace-controller: deletes a terminating namespace's contents, then the namespace;
//   - garbage-collector-controller: deletes dependents whose owners are gone (a deleted
//     Deployment's ReplicaSets and their Pods);
//   - deployment-controller, replicaset-controller: a Deployment gets its ReplicaSet and
//     Pods (which stay Pending: there is no kubelet and no scheduler);
//   - serviceaccount-controller: each namespace gets its `default` ServiceAccount;
//   - serviceaccount-token-controller: fills the token (signed with the service-account
//     key) and ca.crt (--root-ca-file) of a `kubernetes.io/service-account-token` Secret
//     created by hand; since 1.24 none is created automatically.
const defaultControllers = "namespace-controller,garbage-collector-controller," +
	"deployment-controller,replicaset-controller,serviceaccount-controller," +
	"serviceaccount-token-controller"

// controllerArgs are the kube-controller-manager flags this harness always passes;
// cfg.controllerArgs (--controller-manager-arg) come after them.
func controllerArgs(cfg *config, keys *pki, kubeconfig string) []string {
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + cfg.controllers,
		// One controller manager, in this process: nothing to elect, and an election
		// would add a Lease object and a delay of its own to every start.
		"--leader-elect=false",
		// No serving port: nothing scrapes its metrics or health here.
		"--secure-port=0",
		"--service-account-private-key-file=" + keys.saKey,
		"--root-ca-file=" + keys.caCert,
	}
	return append(args, cfg.controllerArgs...)
}

// controllerManager is a parsed, not yet started kube-controller-manager.
type controllerManager struct {
	opts *options.KubeControllerManagerOptions
}

func newControllerManager(args []string) (*controllerManager, error) {
	s, err := options.NewKubeControllerManagerOptions()
	if err != nil {
		return nil, err
	}
	fs := pflag.NewFlagSet("kube-controller-manager", pflag.ContinueOnError)
	flags := s.Flags(app.KnownControllers(), app.ControllersDisabledByDefault(), app.ControllerAliases())
	for _, f := range flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("kube-controller-manager flags: %w", err)
	}
	return &controllerManager{opts: s}, nil
}

// run starts the controllers and returns once @ctx is cancelled and they have stopped.
// Its logging configuration is not applied: the apiserver's already was, and klog is
// process-wide.
func (c *controllerManager) run(ctx context.Context) error {
	conf, err := c.opts.Config(ctx, app.KnownControllers(), app.ControllersDisabledByDefault(),
		app.ControllerAliases())
	if err != nil {
		return fmt.Errorf("kube-controller-manager options: %w", err)
	}
	return app.Run(ctx, conf.Complete())
}
