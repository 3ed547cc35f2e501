package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/claimcheck/claimcheck/pkg/embedded"
	"github.com/claimcheck/claimcheck/pkg/stream"
)

// serveNATSArg makes ccbench run only a JetStream server (serveNATS): the
// server of startProcJS.
const serveNATSArg = "-internal-serve-nats"

// serveNATS runs the JetStream server of startLocalJS with its store in
// dir, prints its client URL on a line of stdout, and shuts it down when
// stdin closes.
func serveNATS(dir string) error {
	srv, err := embedded.Start(context.Background(), embedded.Config{StoreDir: dir, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	fmt.Println(srv.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startProcJS is startLocalJS with the server in a child process (this
// program run with serveNATSArg), so that its CPU can be told from the
// benchmark's.
func startProcJS(ctx context.Context, storeDir string, jsOpts ...jetstream.JetStreamOpt) (*localJS, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, serveNATSArg, storeDir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l := &localJS{proc: cmd, stdin: stdin}
	fail := func(err error) (*localJS, error) {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("NATS server process: %w", err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l.clientURL = <-line:
	case <-time.After(time.Minute):
		return fail(errors.New("no client URL after a minute"))
	}
	if !strings.HasPrefix(l.clientURL, "nats://") {
		return fail(fmt.Errorf("printed %q, not a client URL", l.clientURL))
	}
	if l.nc, err = nats.Connect(l.clientURL); err != nil {
		return fail(err)
	}
	l.js, _ = jetstream.New(l.nc, jsOpts...)
	if err := stream.Ensure(ctx, l.js, stream.DefaultOptions()); err != nil {
		l.nc.Close()
		return fail(err)
	}
	return l, nil
}
