//go:build unix

package doctor

// detachedMeans is what the probe's "detached" checks on this system.
const detachedMeans = "a session of its own"
