/**
 * The icon browsers ask every site for at /favicon.ico: the brand's mark (a rounded square from the
 * primary colour to the green, as .brand .mark in style.ts), 32 × 32, one PNG inside an ICO file.
 */
export const FAVICON = Buffer.from(
  'AAABAAEAICAAAAEAIAC6AQAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAYFJREFUeNrF191Hg2EYx/HrfO3t2fO2/SORSCQSiUjUaq2t1dbet/bSWhKRkUgkEpFIJBKRSCQSif6eX9ctD4+OOtmug9/x58t9n1zkmfsmT/SL90l98x+8d+pbeOO9wht7gXfxmfcEb/wRvvgDfEv3vDv4ErfwJ27gT17Dv3zFu0QgdcE7R2DljHeK4OoJgulj3hGCmUPSMgekre3zOqRl90jL7dJfHIyjCzgYB+O8Dhw8lNshCRyMQ+Gh/DZJ4WCc1ybnzSVwhAot6taH+w8OvdAgSRx6sQaSxPVihQMEcb1UUgFyuFHOc4AgbpSzIEncqKQ5QBA3KikVIIeb1SQHCOJmNQ6SxM31GAcI4mYtygGCuFWbVQFyuFWfAUniVn1aBcjhVmOKAwRxuzGpAuRwuzkBksTt5jgHCOL2xpgKkMPDrVEO+L1YRPBwa4Scc0kCR3hzmJxbTQLnDZH7UOw5HmkPErkPxV7jkfYAuXFSt5o6l9TF0o0Pp97cjUe2+ukHkOjcoolfnrsAAAAASUVORK5CYII=',
  'base64',
)
