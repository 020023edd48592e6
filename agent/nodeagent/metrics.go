package nodeagent

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/virtflow/virtflow/agent/hypervisor"
)

// The agent's usage metrics, in Prometheus format on --metrics-addr (MetricsHandler). Every
// series carries node (the compute node's id) and the per-VM ones vm_id; the server's graph
// queries (package usagegraph) select VMs by vm_id, so these names are a contract:
// deploy/prometheus/usage-rules.yml records from them.
const (
	MetricVMCPUSeconds     = "virtflow_vm_cpu_seconds_total"
	MetricVMVCPUs          = "virtflow_vm_vcpus"
	MetricVMMemoryBytes    = "virtflow_vm_memory_bytes"
	MetricVMMemoryMaxBytes = "virtflow_vm_memory_max_bytes"
	MetricVMDiskRead       = "virtflow_vm_disk_read_bytes_total"
	MetricVMDiskWrite      = "virtflow_vm_disk_write_bytes_total"
	MetricVMNetRx          = "virtflow_vm_network_receive_bytes_total"
	MetricVMNetTx          = "virtflow_vm_network_transmit_bytes_total"
	MetricVMRunning        = "virtflow_vm_running"
	MetricNodeCPUs         = "virtflow_node_cpus"
	MetricNodeMemoryBytes  = "virtflow_node_memory_bytes"
	MetricNodeDomains      = "virtflow_node_domains"
	MetricAgentUp          = "virtflow_agent_stats_up"
	MetricAgentScrape      = "virtflow_agent_stats_duration_seconds"
)

// statsCollector reads the hypervisor's domain statistics at every scrape (one libvirt
// call for all domains, bounded by a timeout): no goroutine, no cache to go stale.
type statsCollector struct {
	hv      hypervisor.Hypervisor
	stats   hypervisor.StatsReader // nil when the hypervisor has none
	node    func() string
	timeout time.Duration
	descs   map[string]*prometheus.Desc
}

func newStatsCollector(hv hypervisor.Hypervisor, node func() string) *statsCollector {
	c := &statsCollector{hv: hv, node: node, timeout: 10 * time.Second, descs: map[string]*prometheus.Desc{}}
	c.stats, _ = hv.(hypervisor.StatsReader)
	vm := []string{"node", "vm_id"}
	for name, help := range map[string]string{
		MetricVMCPUSeconds:     "CPU time the VM's domain used, in seconds.",
		MetricVMVCPUs:          "vCPUs of the VM's running domain.",
		MetricVMMemoryBytes:    "Memory the VM's guest has now (balloon), in bytes.",
		MetricVMMemoryMaxBytes: "Maximum memory of the VM's domain, in bytes.",
		MetricVMDiskRead:       "Bytes read from the VM's disks.",
		MetricVMDiskWrite:      "Bytes written to the VM's disks.",
		MetricVMNetRx:          "Bytes the VM's interfaces received.",
		MetricVMNetTx:          "Bytes the VM's interfaces sent.",
		MetricVMRunning:        "1 when the VM's domain runs, else 0.",
	} {
		c.descs[name] = prometheus.NewDesc(name, help, vm, nil)
	}
	c.descs[MetricNodeCPUs] = prometheus.NewDesc(MetricNodeCPUs, "Logical CPUs of the node.", []string{"node"}, nil)
	c.descs[MetricNodeMemoryBytes] = prometheus.NewDesc(MetricNodeMemoryBytes, "Memory of the node, in bytes.", []string{"node"}, nil)
	c.descs[MetricNodeDomains] = prometheus.NewDesc(MetricNodeDomains, "VirtFlow domains on the node, by state.", []string{"node", "state"}, nil)
	c.descs[MetricAgentUp] = prometheus.NewDesc(MetricAgentUp, "1 when the agent read the hypervisor's statistics at this scrape, else 0.", []string{"node"}, nil)
	c.descs[MetricAgentScrape] = prometheus.NewDesc(MetricAgentScrape, "How long reading the hypervisor's statistics took, in seconds.", []string{"node"}, nil)
	return c
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	node := c.node()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	start := time.Now()
	up := 1.0
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	counter := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v, labels...)
	}
	if capa, err := c.hv.Capacity(ctx); err == nil {
		gauge(MetricNodeCPUs, float64(capa.VCPUs), node)
		gauge(MetricNodeMemoryBytes, float64(capa.MemoryMiB)*(1<<20), node)
	} else {
		up = 0
	}
	if c.stats != nil {
		doms, err := c.stats.DomainStats(ctx)
		if err != nil {
			up = 0
		}
		states := map[string]int{}
		for _, d := range doms {
			states[string(d.State)]++
			id := strconv.FormatInt(d.VMID, 10)
			running := 0.0
			if d.State == hypervisor.StateRunning {
				running = 1
			}
			gauge(MetricVMRunning, running, node, id)
			counter(MetricVMCPUSeconds, d.CPUSeconds, node, id)
			gauge(MetricVMVCPUs, float64(d.VCPUs), node, id)
			gauge(MetricVMMemoryBytes, float64(d.MemoryBytes), node, id)
			gauge(MetricVMMemoryMaxBytes, float64(d.MemoryMaxBytes), node, id)
			counter(MetricVMDiskRead, float64(d.DiskReadBytes), node, id)
			counter(MetricVMDiskWrite, float64(d.DiskWriteBytes), node, id)
			counter(MetricVMNetRx, float64(d.NetRxBytes), node, id)
			counter(MetricVMNetTx, float64(d.NetTxBytes), node, id)
		}
		for st, n := range states {
			gauge(MetricNodeDomains, float64(n), node, st)
		}
	} else {
		up = 0
	}
	gauge(MetricAgentUp, up, node)
	gauge(MetricAgentScrape, time.Since(start).Seconds(), node)
}

// MetricsHandler serves the agent's /metrics: the usage of the node and of every VM's
// domain (read from the hypervisor at each scrape) and the agent process's own health (Go
// runtime and process collectors).
func (ag *Agent) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newStatsCollector(ag.cfg.Hypervisor, ag.NodeID))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, Timeout: 15 * time.Second}))
	return mux
}
