//go:build windows

package doctor

// detachedMeans is what the probe's "detached" checks on this system.
const detachedMeans = "no console"
