// Command kubeall is the control plane llmgw's Kubernetes tests run on: the
// real etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kubectl of one Kubernetes release, linked into one binary so their
// packages compile once. It runs one component per process, chosen by the
// name it is invoked under (`.ci/kube` makes the symlinks), so each keeps
// its own feature gates, flags and metrics registry, as upstream's mains do.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	var c *cobra.Command
	switch filepath.Base(os.Args[0]) {
	case "etcd":
		etcdmain.Main(os.Args)
		return
	case "kube-apiserver":
		c = apiserver.NewAPIServerCommand()
	case "kube-scheduler":
		c = scheduler.NewSchedulerCommand()
	case "kube-controller-manager":
		c = kcm.NewControllerManagerCommand()
	case "kubectl":
		c = kubectlcmd.NewDefaultKubectlCommand()
	default:
		fmt.Fprintf(os.Stderr, "kubeall: run me as etcd, kube-apiserver, kube-scheduler, kube-controller-manager or kubectl, not %q\n", os.Args[0])
		os.Exit(2)
	}
	os.Exit(cli.Run(c))
}
