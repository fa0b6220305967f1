//go:build !linux

package hugepages

func supported() bool { return false }

func advise() bool { return false }
