package auth_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/auth"
)

func Example() {
	key, _ := auth.NewKey(bytes.Repeat([]byte{7}, auth.MinKeySize))
	channel := []byte("example/datagrams")
	sealer := auth.NewSealer(key, channel, 3, 0, 0) // node 3's messages to node 0
	opener := auth.NewOpener(key, channel, 0, 4)    // node 0 of a 4-node cluster
	sealed := sealer.Seal(nil, []byte("hello"))
	msg, from, err := opener.Open(sealed)
	fmt.Printf("%s from %d, %v\n", msg, from, err)
	_, _, err = opener.Open(sealed) // the same datagram again
	fmt.Println(errors.Is(err, auth.ErrReplayed))
	// Output:
	// hello from 3, <nil>
	// true
}
