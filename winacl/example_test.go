package winacl_test

import (
	"fmt"

	"github.com/bo-agent/sandbox-local/winacl"
)

func ExampleWriteSID() {
	a, _ := winacl.WriteSID(`C:\src\proj`, nil)
	b, _ := winacl.WriteSID(`\\?\c:\SRC\Proj\`, nil)
	fmt.Println(a == b, a)
	// Output: true S-1-5-21-35582850-3608892301-2061588724-3332586256
}

func ExampleCanonicalize() {
	for _, p := range []string{`c:/Users/me/./src/../src/`, `\\?\UNC\server\share\x`, `\\localhost\d$\data`} {
		c, _ := winacl.Canonicalize(p, nil)
		fmt.Println(c)
	}
	// Output:
	// C:\Users\me\src
	// \\server\share\x
	// D:\data
}
