package github

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"
)

// GitHub App JWT timing: GitHub refuses an exp more than 10 minutes after
// iat, and a JWT whose iat is in the future of its own clock, so iat is
// backdated by AppJWTSkew and exp set AppJWTLifetime after the real now.
const (
	AppJWTSkew     = 60 * time.Second
	AppJWTLifetime = 9 * time.Minute
)

// ParseAppKey decodes a GitHub App private key: the PEM GitHub hands out
// (PKCS#1 "RSA PRIVATE KEY") or a PKCS#8 "PRIVATE KEY" holding an RSA key.
// Its errors never quote the key.
func ParseAppKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("github app key: no PEM block found")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("github app key: not a valid PKCS#1 RSA key")
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("github app key: not a valid PKCS#8 key")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, errors.New("github app key: a GitHub App key is RSA, this PKCS#8 key is not")
		}
		return rk, nil
	}
	return nil, fmt.Errorf("github app key: unexpected PEM block %q (want RSA PRIVATE KEY)", block.Type)
}

// SignAppJWT returns the RS256 JWT that authenticates as the App: iss the
// App id, iat now-AppJWTSkew, exp now+AppJWTLifetime. The JWT is a
// credential: never log it.
func SignAppJWT(key *rsa.PrivateKey, appID string, now time.Time) (string, time.Time, error) {
	if key == nil || strings.TrimSpace(appID) == "" {
		return "", time.Time{}, errors.New("github app jwt: a key and an App id are required")
	}
	exp := now.Add(AppJWTLifetime)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, err := json.Marshal(map[string]any{"iat": now.Add(-AppJWTSkew).Unix(), "exp": exp.Unix(), "iss": appID})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("github app jwt: %w", err)
	}
	signing := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("github app jwt: sign: %w", err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), exp, nil
}
