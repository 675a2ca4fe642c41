package githubtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// jwtMaxLifetime is the longest exp-iat GitHub accepts (10 minutes), and
// jwtSkew the clock drift it allows an iat in the future.
const (
	jwtMaxLifetime = 10 * time.Minute
	jwtSkew        = time.Minute
)

// verifyJWT checks an App JWT as GitHub does: RS256 signed by the App's
// key, iss the App id, iat not in the future (beyond skew), exp in the
// future and no more than 10 minutes after iat.
func verifyJWT(tok string, pub *rsa.PublicKey, appID int64, now time.Time) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || pub == nil {
		return errors.New("malformed")
	}
	hdr, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return errors.New("header")
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(hdr, &h) != nil || h.Alg != "RS256" {
		return errors.New("alg")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("signature encoding")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
		return errors.New("signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return errors.New("claims")
	}
	var c struct {
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
		Iss json.RawMessage `json:"iss"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return errors.New("claims")
	}
	iss := strings.Trim(string(c.Iss), `"`)
	if iss != strconv.FormatInt(appID, 10) {
		return errors.New("iss")
	}
	iat, exp := time.Unix(c.Iat, 0), time.Unix(c.Exp, 0)
	switch {
	case iat.After(now.Add(jwtSkew)):
		return errors.New("iat in the future")
	case !now.Before(exp):
		return errors.New("expired")
	case exp.Sub(iat) > jwtMaxLifetime:
		return errors.New("lifetime over 10 minutes")
	}
	return nil
}
