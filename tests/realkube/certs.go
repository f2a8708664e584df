package main

// Key material of the cluster: a CA, a serving certificate signed by it and the
// service-account signing key. Everything is written under DATA/pki on the first start and
// read back on later ones, so a restart on the same data dir is the same cluster for its
// clients: a kubeconfig written before the restart still verifies the server, and a
// service-account token issued before it still validates.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki names the files of the cluster's key material.
type pki struct {
	dir        string
	caCert     string // PEM CA certificate: the kubeconfigs' certificate-authority-data
	caKey      string
	serverCert string // PEM serving certificate for 127.0.0.1/localhost, signed by the CA
	serverKey  string
	saKey      string // PEM RSA private key: signs and verifies service-account tokens
}

func newPKI(dataDir string) *pki {
	dir := filepath.Join(dataDir, "pki")
	return &pki{
		dir:        dir,
		caCert:     filepath.Join(dir, "ca.crt"),
		caKey:      filepath.Join(dir, "ca.key"),
		serverCert: filepath.Join(dir, "apiserver.crt"),
		serverKey:  filepath.Join(dir, "apiserver.key"),
		saKey:      filepath.Join(dir, "sa.key"),
	}
}

// ensure creates whatever key material is missing and keeps what exists. The serving
// certificate is regenerated when the CA had to be (a certificate from another CA would
// not verify) or when it is missing.
func (p *pki) ensure() error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caCert, caKey, fresh, err := p.ensureCA()
	if err != nil {
		return err
	}
	if fresh || !exists(p.serverCert) || !exists(p.serverKey) {
		if err := p.writeServing(caCert, caKey); err != nil {
			return err
		}
	}
	if !exists(p.saKey) {
		// The apiserver's service-account authenticator and the token controller accept
		// RSA or ECDSA keys; RSA is what kubeadm generates, so tokens look like a real
		// cluster's (RS256).
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return err
		}
		if err := writeKey(p.saKey, key); err != nil {
			return err
		}
	}
	return nil
}

func (p *pki) ensureCA() (*x509.Certificate, crypto.Signer, bool, error) {
	if exists(p.caCert) && exists(p.caKey) {
		cert, err := readCert(p.caCert)
		if err != nil {
			return nil, nil, false, err
		}
		key, err := readKey(p.caKey)
		if err != nil {
			return nil, nil, false, err
		}
		return cert, key, false, nil
	}
	// ECDSA P-256: generated in a millisecond (an RSA CA would cost a noticeable part of
	// the start) and handled by every TLS stack meshsync may be linked against.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, false, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "meshsync-realkube-ca"},
		NotBefore:             now.Add(-time.Hour), // tolerate a little clock skew
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, false, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, false, err
	}
	if err := writeKey(p.caKey, key); err != nil {
		return nil, nil, false, err
	}
	if err := writePEM(p.caCert, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, false, err
	}
	return cert, key, true, nil
}

func (p *pki) writeServing(ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// The names a client of this harness may use, plus the in-cluster ones a real
		// apiserver certificate carries (10.0.0.1 is the `kubernetes` Service's ClusterIP
		// in --service-cluster-ip-range 10.0.0.0/16 and our --advertise-address).
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback, net.ParseIP("10.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	if err := writeKey(p.serverKey, key); err != nil {
		return err
	}
	return writePEM(p.serverCert, "CERTIFICATE", der, 0o644)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writePEM writes through a temporary file and a rename so that a start killed half-way
// never leaves a truncated key behind for the next start to choke on.
func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readPEM(path, kind string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != kind {
		return nil, fmt.Errorf("%s: no PEM %s block", path, kind)
	}
	return block.Bytes, nil
}

func readCert(path string) (*x509.Certificate, error) {
	der, err := readPEM(path, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

func readKey(path string) (crypto.Signer, error) {
	der, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New(path + ": not a signing key")
	}
	return signer, nil
}
