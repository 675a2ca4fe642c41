package storage

import (
	"fmt"
	"syscall"
)

// FreeBytes returns the bytes an unprivileged writer may still use on the
// filesystem holding dir.
func FreeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("storage: statfs %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
