package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// File names under the home folder.
const (
	DaemonFile = "daemon.json"
	TokenFile  = "daemon-token"
	LockFile   = "daemon.lock"
	StoreDir   = "jetstream"
	// NATSTokenFile holds the token clients of the embedded server's
	// listener present (nats.listen), when nats.listen_token is empty.
	NATSTokenFile = "nats-token"
)

// prepareHome creates the home folder 0700, or makes an existing one 0700:
// it holds the API token, the NATS token and the store with every secret.
// A home the node cannot keep private is refused.
func prepareHome(home string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create home %s: %w", home, err)
	}
	fi, err := os.Stat(home)
	if err != nil {
		return fmt.Errorf("home %s: %w", home, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("home %s is not a folder", home)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(home, 0o700); err != nil {
			return fmt.Errorf("home %s is mode %o and cannot be made private (0700): %w", home, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// DaemonInfo is the content of daemon.json: how clients find the node.
type DaemonInfo struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
	// TLSCert is the API listener's certificate file (absolute) when the
	// node serves https: a local client pins it (the URL names loopback,
	// the certificate a public host).
	TLSCert string `json:"tlsCert,omitempty"`
}

// lockHome takes an exclusive lock on <home>/daemon.lock so a second node
// on the same home refuses to start.
func lockHome(home string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(home, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another sentinel node is already running on home %s (stop it, or set AGENTPROTO_HOME to another folder)", home)
		}
		return nil, fmt.Errorf("lock home: %w", err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return f, nil
}

// loadOrCreateToken returns the API token: the configured one (written to
// <home>/daemon-token, 0600, for local clients, when the file differs),
// else the one in <home>/daemon-token, creating a random one (0600) when
// absent.
func loadOrCreateToken(home, configured string) (string, error) {
	if configured == "" {
		return loadOrCreateSecret(home, TokenFile)
	}
	path := filepath.Join(home, TokenFile)
	if raw, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(raw)) == configured {
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		return configured, nil
	}
	if err := writeFileAtomic(path, []byte(configured+"\n")); err != nil {
		return "", err
	}
	return configured, nil
}

// loadOrCreateSecret returns the secret kept in <home>/<name>, creating a
// random one (0600) when absent or too short.
func loadOrCreateSecret(home, name string) (string, error) {
	path := filepath.Join(home, name)
	raw, err := os.ReadFile(path)
	if err == nil {
		if tok := strings.TrimSpace(string(raw)); len(tok) >= 32 {
			_ = os.Chmod(path, 0o600)
			return tok, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token: %w", err)
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	tok := hex.EncodeToString(buf)
	if err := writeFileAtomic(path, []byte(tok+"\n")); err != nil {
		return "", err
	}
	return tok, nil
}

func writeDaemonInfo(home string, info DaemonInfo) error {
	raw, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(home, DaemonFile), append(raw, '\n'))
}

// writeFileAtomic writes a 0600 file through a temp file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
