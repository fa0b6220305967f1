//go:build !linux

package testmount

import "errors"

func mount(dir, size string) error     { return errors.ErrUnsupported }
func unmount(dir string) error         { return errors.ErrUnsupported }
func remountReadOnly(dir string) error { return errors.ErrUnsupported }
