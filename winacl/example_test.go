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

func ExampleIsProtected() {
	protected := []string{`C:\ws\.git\hooks`, `C:\ws\.git\config`}
	for _, p := range []string{`C:\ws\.GiT\HOOKS\pre-commit`, `C:\ws\.git\config:evil`, `C:\ws\.git\index`} {
		fmt.Println(p, winacl.IsProtected(p, protected))
	}
	// Output:
	// C:\ws\.GiT\HOOKS\pre-commit true
	// C:\ws\.git\config:evil true
	// C:\ws\.git\index false
}
