package fabric

// SearchAtPause turns the deadlock search at pause time on or off (off:
// only the periodic sweep finds cycles).
func SearchAtPause(on bool) { searchAtPause = on }
