package infile_test

import (
	"fmt"

	"github.com/chronosync/chronosync/infile"
)

// ExampleOpen opens a key file: a device, a FIFO or a file beyond 4 KiB
// is refused before a byte of it is read.
func ExampleOpen() {
	f, err := infile.Open("/dev/zero", infile.Key)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	// Output: open /dev/zero: is a character device, not a regular file (expected a key file)
}
