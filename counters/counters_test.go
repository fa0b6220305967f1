package counters

import (
	"reflect"
	"testing"
)

// Add sums every counter, keeps the larger MaxQueueBytes and leaves
// UtilizationPct alone. Fields are set by reflection so a new counter that
// Add forgets fails here.
func TestCountersAdd(t *testing.T) {
	var a, b Counters
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := 0; i < va.NumField(); i++ {
		switch va.Field(i).Kind() {
		case reflect.Int64:
			va.Field(i).SetInt(int64(10 + i))
			vb.Field(i).SetInt(int64(1000 * (i + 1)))
		case reflect.Float64:
			va.Field(i).SetFloat(0.5 + float64(i))
			vb.Field(i).SetFloat(0.25 * float64(i+1))
		default:
			t.Fatalf("field %s has unexpected kind %v", va.Type().Field(i).Name, va.Field(i).Kind())
		}
	}
	before := a
	a.Add(b)
	vbefore := reflect.ValueOf(before)
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		got, x, y := va.Field(i), vbefore.Field(i), vb.Field(i)
		switch name {
		case "MaxQueueBytes", "ReorderMaxPackets":
			if got.Int() != max(x.Int(), y.Int()) {
				t.Errorf("%s = %d, want max(%d, %d)", name, got.Int(), x.Int(), y.Int())
			}
		case "UtilizationPct":
			if got.Float() != x.Float() {
				t.Errorf("%s = %v, want it unchanged (%v)", name, got.Float(), x.Float())
			}
		default:
			if got.Kind() == reflect.Int64 && got.Int() != x.Int()+y.Int() {
				t.Errorf("%s = %d, want %d + %d", name, got.Int(), x.Int(), y.Int())
			}
			if got.Kind() == reflect.Float64 && got.Float() != x.Float()+y.Float() {
				t.Errorf("%s = %v, want %v + %v", name, got.Float(), x.Float(), y.Float())
			}
		}
	}
	// The larger max wins whichever side holds it.
	c := Counters{MaxQueueBytes: 5}
	c.Add(Counters{MaxQueueBytes: 3})
	if c.MaxQueueBytes != 5 {
		t.Errorf("max queue %d, want 5", c.MaxQueueBytes)
	}
}
