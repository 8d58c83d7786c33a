import { prefixKeyCases } from "./prefix-cases";

prefixKeyCases("node");
