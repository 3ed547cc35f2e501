// Command kmsplugin is a sigstore KMS plugin (cliplugin protocol) for the
// keyring tests, installed as sigstore-kms-cctest: key reference
// cctest://<path> is an ECDSA P-256 key in a PEM file at <path>, standing in
// for a remote KMS. It holds real keys and makes real signatures; only the
// storage is local.
package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin/handler"
)

func main() {
	args, err := handler.GetPluginArgs(os.Args)
	if err != nil {
		_ = handler.WriteErrorResponse(os.Stdout, err)
		return
	}
	path := strings.TrimPrefix(args.InitOptions.KeyResourceID, "cctest://")
	if _, err := handler.Dispatch(os.Stdout, os.Stdin, args, &fileKMS{path: path}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

type fileKMS struct{ path string }

func (k *fileKMS) load() (*ecdsa.PrivateKey, error) {
	raw, err := os.ReadFile(k.path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("not PEM")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

func (k *fileKMS) CreateKey(context.Context, string) (crypto.PublicKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(k.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return priv.Public(), pem.Encode(f, &pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func (k *fileKMS) PublicKey(...signature.PublicKeyOption) (crypto.PublicKey, error) {
	priv, err := k.load()
	if err != nil {
		return nil, err
	}
	return priv.Public(), nil
}

func (k *fileKMS) SignMessage(msg io.Reader, _ ...signature.SignOption) ([]byte, error) {
	priv, err := k.load()
	if err != nil {
		return nil, err
	}
	s, err := signature.LoadECDSASigner(priv, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return s.SignMessage(msg)
}

func (k *fileKMS) VerifySignature(sig, msg io.Reader, _ ...signature.VerifyOption) error {
	priv, err := k.load()
	if err != nil {
		return err
	}
	v, err := signature.LoadECDSAVerifier(&priv.PublicKey, crypto.SHA256)
	if err != nil {
		return err
	}
	return v.VerifySignature(sig, msg)
}

func (k *fileKMS) CryptoSigner(context.Context, func(error)) (crypto.Signer, crypto.SignerOpts, error) {
	return nil, nil, errors.New("not supported")
}

func (k *fileKMS) SupportedAlgorithms() []string { return []string{"ecdsa-p256-sha256"} }
func (k *fileKMS) DefaultAlgorithm() string      { return "ecdsa-p256-sha256" }
