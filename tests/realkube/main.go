// Command meshsync-realkube runs a real kube-apiserver, an embedded etcd and the
// controllers meshsync's tests rely on, all in one process, for tests that must hold
// meshsync against the real server rather than meshsync-kubesim.
//
// It prints one line to stdout, the server's URL, once /readyz answers ok (and after the
// kubeconfigs asked for are written), then serves until SIGTERM or SIGINT, on which it
// stops the controllers, the apiserver and etcd in that order and exits 0. Everything
// else goes to stderr.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
)

// config is what the command line says.
type config struct {
	port               int
	dataDir            string
	kubeconfig         string
	restrictedConfig   string
	token              string
	restrictedToken    string
	compaction         time.Duration
	watchCache         bool
	saAdmission        bool
	controllers        string
	featureGates       string
	endpointReconciler string
	verbosity          int
	apiserverArgs      []string
	controllerArgs     []string
}

const usageHead = `Usage: meshsync-realkube [FLAGS]

Runs a real kube-apiserver (k8s.io/kubernetes v1.37.2) with an embedded etcd and the
namespace, garbage-collector, deployment, replicaset and service-account controllers in
one process. Prints the server URL (https://127.0.0.1:PORT) on stdout once ready; logs go
to stderr. SIGTERM/SIGINT stop it cleanly (exit status 0).

Users: "admin" (group system:masters) with --token; "restricted" (no group but
system:authenticated, no RBAC grant) with --restricted-token.

Flags:
`

func parseFlags(argv []string) (*config, error) {
	cfg := &config{}
	fs := pflag.NewFlagSet("meshsync-realkube", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.IntVar(&cfg.port, "port", 0, "HTTPS port on 127.0.0.1 (`N`; 0: a free port)")
	fs.StringVar(&cfg.dataDir, "data-dir", "", "`DIR` of the cluster's state: etcd data (DIR/etcd), CA, serving and service-account keys (DIR/pki); a later start on it is the same cluster (default: a temporary directory removed at exit)")
	fs.StringVar(&cfg.kubeconfig, "write-kubeconfig", "", "write the admin's kubeconfig (server URL, CA, --token) to `FILE` before the URL is printed")
	fs.StringVar(&cfg.restrictedConfig, "write-restricted-kubeconfig", "", "write the restricted user's kubeconfig to `FILE` before the URL is printed")
	fs.StringVar(&cfg.token, "token", "realkube-admin-token", "bearer `TOKEN` of user \"admin\", group system:masters")
	fs.StringVar(&cfg.restrictedToken, "restricted-token", "realkube-restricted-token", "bearer `TOKEN` of user \"restricted\", with no RBAC grant until a test makes one")
	fs.DurationVar(&cfg.compaction, "etcd-compaction-interval", 5*time.Minute, "`DURATION` between the apiserver's compactions of etcd (kube-apiserver's --etcd-compaction-interval; 0 disables); older resourceVersions then answer 410 Gone")
	fs.BoolVar(&cfg.watchCache, "watch-cache", true, "serve lists and watches from the apiserver's watch cache (kube-apiserver's --watch-cache)")
	fs.BoolVar(&cfg.saAdmission, "service-account-admission", false, "run the ServiceAccount admission plugin, as a real cluster does: pods get serviceAccountName \"default\" and a token volume, but one created right after its namespace is refused until the serviceaccount-controller made the namespace's \"default\" ServiceAccount")
	fs.StringVar(&cfg.controllers, "controllers", defaultControllers, "`LIST` of kube-controller-manager controllers to run (its --controllers; \"-\" runs none)")
	fs.StringVar(&cfg.featureGates, "feature-gates", "", "kube-apiserver/kube-controller-manager feature `GATES`, e.g. WatchList=false")
	fs.StringVar(&cfg.endpointReconciler, "endpoint-reconciler-type", "lease", "kube-apiserver's --endpoint-reconciler-type `TYPE`: lease keeps the \"kubernetes\" Service's endpoints at 10.0.0.1:PORT; none leaves it without any")
	fs.IntVar(&cfg.verbosity, "v", -1, "log info messages too, at klog verbosity `N` (-1: warnings and errors only)")
	fs.StringArrayVar(&cfg.apiserverArgs, "apiserver-arg", nil, "one more kube-apiserver `FLAG`, e.g. --apiserver-arg=--max-requests-inflight=10 (repeatable; after ours, so it wins over a plain flag of ours and adds to a list flag)")
	fs.StringArrayVar(&cfg.controllerArgs, "controller-manager-arg", nil, "one more kube-controller-manager `FLAG` (repeatable; after ours, like --apiserver-arg)")
	fs.Usage = func() {
		fmt.Fprint(os.Stderr, usageHead)
		fmt.Fprint(os.Stderr, fs.FlagUsages())
	}
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(argv); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.port < 0 || cfg.port > 65535 {
		return nil, fmt.Errorf("--port %d: out of range", cfg.port)
	}
	if cfg.token == "" || cfg.restrictedToken == "" || cfg.token == cfg.restrictedToken {
		return nil, errors.New("--token and --restricted-token must be set and differ")
	}
	if cfg.controllers == "-" {
		cfg.controllers = "-*" // kube-controller-manager's spelling of "none"
	}
	return cfg, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, pflag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshsync-realkube:", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "meshsync-realkube:", err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(cfg *config) error {
	// A second signal while we shut down gives up on the clean stop.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)

	dataDir := cfg.dataDir
	if dataDir == "" {
		tmp, err := os.MkdirTemp("", "meshsync-realkube-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dataDir = tmp
	} else if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}

	keys := newPKI(dataDir)
	if err := keys.ensure(); err != nil {
		return fmt.Errorf("key material: %w", err)
	}
	// The token file is rewritten on every start: the tokens are flags, not state.
	tokenFile := filepath.Join(dataDir, "tokens.csv")
	tokens := fmt.Sprintf("%s,admin,realkube-admin,\"system:masters\"\n%s,restricted,realkube-restricted\n",
		cfg.token, cfg.restrictedToken)
	if err := os.WriteFile(tokenFile, []byte(tokens), 0o600); err != nil {
		return err
	}

	// The serving socket is bound first, so the port is known (and ours) before the
	// server starts: with --port 0 the kernel picks it and nobody can take it in between.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port)))
	if err != nil {
		return err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	url := "https://127.0.0.1:" + strconv.Itoa(port)

	etcd, err := startEtcd(filepath.Join(dataDir, "etcd"))
	if err != nil {
		return err
	}
	defer etcd.close()

	// Parse both components' flags before either starts: they share the process-wide
	// feature-gate and version registry, which Set() freezes once all flags are in.
	apiArgs := apiserverArgs(cfg, keys, etcd.url, tokenFile, port)
	if cfg.verbosity >= 0 {
		apiArgs = append(apiArgs, "--v="+strconv.Itoa(cfg.verbosity))
	}
	api, err := newAPIServer(apiArgs, ln)
	if err != nil {
		return err
	}
	cmKubeconfig := filepath.Join(dataDir, "controller-manager.kubeconfig")
	var cm *controllerManager
	if cfg.controllers != "-*" {
		if cm, err = newControllerManager(controllerArgs(cfg, keys, cmKubeconfig)); err != nil {
			return err
		}
	}
	registry := api.opts.GenericServerRunOptions.ComponentGlobalsRegistry
	if err := registry.Set(); err != nil {
		return err
	}
	featureGate := registry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	// klog is process-wide: configured once, here, from the apiserver's logging options,
	// for both components. The text format writes every message to ErrorStream.
	logOut := io.Writer(os.Stderr)
	if cfg.verbosity < 0 {
		logOut = dropInfo{os.Stderr}
	}
	if err := logsapi.ValidateAndApplyWithOptions(api.opts.Logs,
		&logsapi.LoggingOptions{ErrorStream: logOut, InfoStream: logOut}, featureGate); err != nil {
		return err
	}

	for _, k := range []struct{ path, user, token string }{
		{cmKubeconfig, "admin", cfg.token},
		{cfg.kubeconfig, "admin", cfg.token},
		{cfg.restrictedConfig, "restricted", cfg.restrictedToken},
	} {
		if k.path == "" {
			continue
		}
		if err := writeKubeconfig(k.path, url, keys.caCert, k.user, k.token); err != nil {
			return fmt.Errorf("kubeconfig %s: %w", k.path, err)
		}
	}

	apiCtx, stopAPI := context.WithCancel(context.Background())
	defer stopAPI()
	apiDone := make(chan error, 1)
	go func() { apiDone <- api.run(apiCtx) }()

	readyCtx, cancelReady := context.WithCancel(context.Background())
	defer cancelReady()
	ready := make(chan error, 1)
	go func() { ready <- waitReady(readyCtx, url, keys.caCert, cfg.token) }()
	// A signal during the start is acted on once the server is up: the apiserver's
	// post-start hooks (RBAC bootstrap, service IP repair, ...) end the process with
	// klog.Fatal, status 255, when their context is cancelled half-way through.
	stopping := false
	for started := false; !started; {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
			started = true
		case err := <-apiDone:
			return fmt.Errorf("kube-apiserver stopped before it was ready: %v", err)
		case <-signals:
			if stopping {
				return errors.New("second signal during the start, not waiting for it")
			}
			stopping = true
			fmt.Fprintln(os.Stderr, "meshsync-realkube: signal during the start; stopping once started")
		}
	}
	if stopping {
		stopAPI()
		return waitStopped("kube-apiserver", apiDone, signals, 60*time.Second)
	}

	cmCtx, stopCM := context.WithCancel(context.Background())
	defer stopCM()
	cmDone := make(chan error, 1)
	if cm != nil {
		go func() { cmDone <- cm.run(cmCtx) }()
	}

	fmt.Println(url)
	os.Stdout.Sync()

	select {
	case <-signals:
	case err := <-apiDone:
		return fmt.Errorf("kube-apiserver stopped: %v", err)
	case err := <-cmDone:
		return fmt.Errorf("kube-controller-manager stopped: %v", err)
	}
	// The controllers first, while the apiserver still answers them, then the apiserver
	// while etcd still does, then etcd (deferred).
	if cm != nil {
		stopCM()
		if err := waitStopped("kube-controller-manager", cmDone, signals, 30*time.Second); err != nil {
			return err
		}
	}
	stopAPI()
	return waitStopped("kube-apiserver", apiDone, signals, 60*time.Second)
}

// waitStopped waits for a component's run function to return after its context was
// cancelled; a second signal or the @limit gives up on it.
func waitStopped(what string, done <-chan error, signals <-chan os.Signal, limit time.Duration) error {
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	case <-signals:
		return fmt.Errorf("%s: second signal, not waiting for it to stop", what)
	case <-time.After(limit):
		return fmt.Errorf("%s: not stopped after %s", what, limit)
	}
}

// waitReady polls /readyz with the admin token until it answers 200. Every poststarthook
// (RBAC bootstrap roles, priority-and-fairness config, CRD informers, aggregator's
// discovery) is part of readyz, so "ready" means a test can create anything at once.
func waitReady(ctx context.Context, url, caFile, token string) error {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	deadline := time.Now().Add(120 * time.Second)
	last := "no answer"
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after 120 s: %s", last)
}

// writeKubeconfig writes a kubeconfig for @user with bearer @token, trusting our CA.
func writeKubeconfig(path, server, caFile, user, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["realkube"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts[user+"@realkube"] = &clientcmdapi.Context{Cluster: "realkube", AuthInfo: user}
	kc.CurrentContext = user + "@realkube"
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return clientcmd.WriteToFile(*kc, path)
}

// dropInfo passes klog's warnings and errors to stderr and drops its informational
// messages: the apiserver and the controllers log a few hundred lines per start at
// verbosity 0, which would drown what a test log is read for. The text logger writes
// each message, header and all, in one Write, whose first byte is its severity.
type dropInfo struct{ out io.Writer }

// benign are warnings and errors that every start of an unmodified kube-apiserver and
// kube-controller-manager logs, and that say nothing about this run: the API versions
// compiled in but not served (33 lines), and an empty metrics allow-list manifest,
// reported as an error by component-base whenever --allow-metric-labels-manifest is unset.
var benign = [][]byte{
	[]byte("because it has no resources."),
	[]byte("The manifest file is empty, ignoring."),
}

func (d dropInfo) Write(p []byte) (int, error) {
	if len(p) > 0 && p[0] == 'I' {
		return len(p), nil
	}
	for _, b := range benign {
		if bytes.Contains(p, b) {
			return len(p), nil
		}
	}
	return d.out.Write(p)
}
