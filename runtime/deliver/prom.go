package deliver

import "github.com/prometheus/client_golang/prometheus"

type (
	prometheusCounter    = prometheus.Counter
	prometheusCounterVec = *prometheus.CounterVec
)
