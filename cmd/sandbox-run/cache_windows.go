package main

import (
	"io"
	"os"
)

// On Windows there is one candidate and nothing is probed; the cache is
// never consulted there. These keep the file compiling.
func readNoFollow(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 4096))
}
