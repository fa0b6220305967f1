package roce

import "fabriclab/units"

// DCQCNParams are the reaction-point (sender) and notification-point
// (receiver) knobs of DCQCN, named as a commercial tester names them. See
// the README's "DCQCN knobs" for units and defaults.
type DCQCNParams struct {
	// Enabled false means PFC only: CNPs are neither sent nor acted on.
	Enabled bool
	// AlphaG: α ← α·g + (1−g) after an alpha interval in which a CNP
	// arrived, else α ← α·g. (NIC: dce_tcp_g/1024.)
	AlphaG float64
	// AlphaInterval is the alpha update period (NIC: dce_tcp_rtt).
	AlphaInterval units.Duration
	// InitialAlpha is α when a QP starts (NIC: initial_alpha_value/1024).
	InitialAlpha float64
	// RateOnFirstCNP: the rate a QP drops to on its first CNP; 0 = its current
	// rate (then the normal cut applies).
	RateOnFirstCNP units.Rate
	// MinDecreaseFactor bounds one cut: new rate ≥ rate × (1 − MinDecreaseFactor).
	MinDecreaseFactor float64
	// DecreaseCoefficient is the fraction of α one cut removes: RC ← RC·(1 −
	// α·DecreaseCoefficient), still bounded by MinDecreaseFactor. 0.5 is the
	// NIC's factory rpg_gd = 11, which the README's "DCQCN knobs" table reads as
	// "cut = rate·α/2" (the DCQCN paper's RC·(1 − α/2)). Other rpg_gd values
	// are not converted here: set the fraction itself, in (0, 1].
	DecreaseCoefficient float64
	// DecreaseInterval: at most one rate cut per interval (NIC:
	// rate_reduce_monitor_period); CNPs inside it only update α.
	DecreaseInterval units.Duration
	// MinRate is the floor of the current rate.
	MinRate units.Rate
	// ClampTargetRate: on a cut, always set the target rate to the current rate.
	ClampTargetRate bool
	// ClampAfterTimeInc: after a timer-driven increase stage, set the target
	// to the current rate on the next cut (NIC: clamp_tgt_rate_after_time_inc).
	ClampAfterTimeInc bool
	// IncreaseInterval is the rate-increase timer (NIC: rpg_time_reset).
	IncreaseInterval units.Duration
	// ByteCounter: bytes sent that count as one increase event (NIC:
	// rpg_byte_reset × 64 B). 0 disables the byte counter.
	ByteCounter units.Size
	// Threshold F: increase events before leaving fast recovery.
	Threshold int
	// AIRate is the additive-increase step; HAIRate the hyper-increase step.
	AIRate  units.Rate
	HAIRate units.Rate
	// CNPInterval is the receiver's minimum time between CNPs per QP.
	CNPInterval units.Duration

	// Details implementations differ on (false: the NVIDIA behaviour
	// modelled by default).
	//
	// FirstCutAtCheck: the first CNP of an episode (with RateOnFirstCNP 0)
	// cuts at the episode's first decrease check, DecreaseInterval later,
	// instead of at once.
	FirstCutAtCheck bool
	// KeepAlpha: a new episode starts from α as it decayed (× AlphaG per
	// alpha interval) since the last one ended, not from InitialAlpha.
	KeepAlpha bool
	// ByteStagesOff: with the byte counter off (ByteCounter 0) its stage BC
	// stays 0 instead of mirroring the timer's T, so recovery never reaches
	// hyper increase.
	ByteStagesOff bool
}
