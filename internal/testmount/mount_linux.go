//go:build linux

package testmount

import "syscall"

const flags = syscall.MS_NOSUID | syscall.MS_NODEV

func mount(dir, size string) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", flags, "size="+size+",mode=0755")
}

func unmount(dir string) error {
	if err := syscall.Unmount(dir, 0); err != nil {
		return syscall.Unmount(dir, syscall.MNT_DETACH)
	}
	return nil
}

func remountReadOnly(dir string) error {
	return syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY|flags, "")
}
