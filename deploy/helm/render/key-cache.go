package main

// Cached keys for genSelfSignedCert (-key-cache DIR). Helm makes a fresh 2048-bit RSA key for
// every certificate a render asks for; the chart asks for one per workload identity and one for
// Envoy, which made each offline render of the chart take ~4 s (RSA key generation), and the
// chart's tests render it ~30 times. With a key cache, the n-th certificate of a render is
// signed with the n-th cached key: keys stay distinct within a render (every pod its own key,
// as with Helm), but are made once per machine and reused by later renders. Offline checks
// only: a real `helm install` still makes new keys.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
)

// cachedKeyPEM answers the n-th key of the cache, making and storing it on first use.
func cachedKeyPEM(dir string, n int) (string, error) {
	file := filepath.Join(dir, fmt.Sprintf("rsa-%d.pem", n))
	if b, err := os.ReadFile(file); err == nil {
		return string(b), nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// Written aside and renamed, so a render running beside this one never reads half a key.
	tmp := fmt.Sprintf("%s.%d", file, os.Getpid())
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, file); err != nil {
		return "", err
	}
	return string(out), nil
}

// withCachedKeys replaces genSelfSignedCert in funcs by sprig's genSelfSignedCertWithKey over
// the cache's keys, in the order the render asks for certificates.
func withCachedKeys(funcs map[string]interface{}, dir string) {
	withKey := reflect.ValueOf(funcs["genSelfSignedCertWithKey"])
	next := 0
	funcs["genSelfSignedCert"] = func(cn string, ips []interface{}, alternateDNS []interface{}, daysValid int) (interface{}, error) {
		key, err := cachedKeyPEM(dir, next)
		if err != nil {
			return nil, fmt.Errorf("key cache: %w", err)
		}
		next++
		out := withKey.Call([]reflect.Value{reflect.ValueOf(cn), reflect.ValueOf(ips), reflect.ValueOf(alternateDNS), reflect.ValueOf(daysValid), reflect.ValueOf(key)})
		if e, _ := out[1].Interface().(error); e != nil {
			return nil, e
		}
		return out[0].Interface(), nil
	}
}
