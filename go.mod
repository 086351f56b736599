module github.com/bo-agent/sandbox-local

go 1.26.8

require (
	github.com/landlock-lsm/go-landlock v0.11.2
	github.com/moby/sys/reexec v0.1.0
	github.com/seccomp/libseccomp-golang v0.11.1
	golang.org/x/sys v0.50.0
)

require kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
