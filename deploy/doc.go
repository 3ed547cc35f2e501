// Package deploy holds no code: its tests check the Kubernetes manifests
// under deploy/k8s offline (kustomize builds every overlay; each object is
// decoded strictly into the Kubernetes API types and checked for the
// invariants docs/deploy.md states). A module of its own keeps the
// Kubernetes and kustomize dependencies out of the others.
package deploy
