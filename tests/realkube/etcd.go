package main

// The embedded etcd: the real storage the apiserver talks to, in this process, so a test
// starts one binary and a restart on the same data dir keeps every object with its uid
// and resourceVersion (etcd revisions carry over).

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// etcdServer is a running embedded etcd.
type etcdServer struct {
	*embed.Etcd
	url      string          // client URL, for --etcd-servers
	logLevel zap.AtomicLevel // error, until close
}

// close stops etcd. Its listeners log "setting up serving from embedded etcd failed"
// errors as they are closed under it: expected on a stop, so its logging goes first.
func (e *etcdServer) close() {
	e.logLevel.SetLevel(zapcore.FatalLevel)
	e.Close()
}

// startEtcd starts a single-member etcd with its data in @dir and returns it once it
// serves.
func startEtcd(dir string) (*etcdServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// etcd refuses a data dir readable by others (it only warns, but loudly).
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	// Fresh ports on every start: a single member keeps its data across a change of
	// its URLs (the member list stored in the WAL is only consulted to join peers), and
	// only our apiserver, told the new client URL, ever connects.
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Name = "realkube"
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// A test cluster that is thrown away (or restarted cleanly) does not need durable
	// writes; fsync per write would make every object creation wait on the disk.
	cfg.UnsafeNoFsync = true
	// The apiserver compacts etcd itself (--etcd-compaction-interval), as in a real
	// cluster; etcd's own auto-compaction stays off (its default) so that our flag alone
	// decides when old resourceVersions expire (410 Gone for a stale watch).
	level := zap.NewAtomicLevelAt(zapcore.ErrorLevel)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(quietZap(level))
	// No metrics listener: nothing scrapes it, and it would be one more port to pick.
	cfg.ListenMetricsUrls = nil

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("etcd: not ready after 60 s")
	}
	return &etcdServer{Etcd: e, url: clientURL.String(), logLevel: level}, nil
}

// quietZap logs etcd's messages at @level or worse (errors) to stderr: its info level
// writes dozens of lines per start that a test log does not want.
func quietZap(level zap.AtomicLevel) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), level)
	return zap.New(core).Named("etcd")
}

// freePorts asks the kernel for @n distinct free loopback ports. They are released before
// use, so another process could take one in between; on a test machine that race is rare
// and shows as a clear "address already in use" error.
func freePorts(n int) ([]int, error) {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
