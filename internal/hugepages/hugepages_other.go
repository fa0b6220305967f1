//go:build !linux

package hugepages

const supported = false

func advise() bool { return false }
